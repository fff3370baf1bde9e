"""The BFCL benchmark: built from the installed bfcl-eval's data, its gold what BFCL accepts."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from agent_backtest.bench.bfcl import CATEGORIES, BfclEnvironment, write_benchmark
from agent_backtest.bench.bfcl.data import read_questions
from agent_backtest.bench.environments import environment_factory
from agent_backtest.bench.models import BenchmarkManifest, Case, Gold
from agent_backtest.errors import UserError
from agent_backtest.scoring.calls import match_calls
from agent_backtest.trace.models import ToolCall, ToolDef
from agent_backtest.trace.openai_wire import tool_def_from_openai
from agent_backtest.units.agent_config import AgentConfig
from tests.scoring.bfcl_cases import MODEL, load_checker, python_language, require_checker

OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@pytest.fixture(scope="module")
def benchmark(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_checker(load_checker())
    return write_benchmark(tmp_path_factory.mktemp("bfcl") / "benchmark")


def _lines(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_every_question_of_the_four_categories_is_a_case_with_its_gold(benchmark: Path) -> None:
    manifest = BenchmarkManifest.model_validate_json((benchmark / "manifest.json").read_bytes())
    cases = [Case.model_validate(row) for row in _lines(benchmark / "cases.jsonl")]
    golds = [Gold.model_validate(row) for row in _lines(benchmark / manifest.gold)]
    expected = [q.id for category in CATEGORIES for q in read_questions(category)]
    assert [case.id for case in cases] == expected == [gold.case_id for gold in golds]
    assert manifest.environment == "bfcl" and manifest.graders == ["tool_calls"]
    assert manifest.rules.max_steps == 1 and not manifest.rules.first_tool_call_only
    assert (benchmark / "cases.jsonl").stat().st_mode & 0o777 == 0o600


def test_a_case_holds_no_acceptable_value_that_its_question_does_not(benchmark: Path) -> None:
    """The gold stays out of the cases: a case is the question and its functions only."""
    for row in _lines(benchmark / "cases.jsonl"):
        assert set(row) == {"id", "messages", "environment", "metadata"}
        assert set(row["metadata"]) == {"category", "functions"}


def test_the_gold_passes_bfcls_checker_and_abts_matcher_on_the_offered_tools(
    benchmark: Path,
) -> None:
    """For every question, the gold's first acceptable values are a correct answer to BFCL's
    own checker (names back in BFCL's spelling) and equal the gold's answer key to the matcher
    under the schemas the agent is offered."""
    checker = load_checker()
    cases = {row["id"]: Case.model_validate(row) for row in _lines(benchmark / "cases.jsonl")}
    questions = {q.id: q for category in CATEGORIES for q in read_questions(category)}
    environment = BfclEnvironment()
    failures = []
    for row in _lines(benchmark / "gold.jsonl"):
        gold = Gold.model_validate(row)
        question, case = questions[gold.case_id], cases[gold.case_id]
        environment.reset(case)
        tools: dict[str, ToolDef] = {}
        for tool in environment.tools():
            assert OPENAI_NAME.match(tool["function"]["name"]), tool["function"]["name"]
            definition = tool_def_from_openai(tool)
            tools[definition.name] = definition
        spelled = {f["name"].replace(".", "_"): f["name"] for f in question.functions}
        prediction = [{spelled[a.name]: a.arguments} for a in gold.actions]
        verdict = checker.ast_checker(
            question.functions,
            prediction,
            question.ground_truth,
            python_language(),
            question.category,
            MODEL,
        )
        calls = [ToolCall(name=a.name, arguments=a.arguments) for a in gold.actions]
        keys = [a.key for a in gold.actions]
        golden = [ToolCall(name=a.name, arguments={}) for a in gold.actions]
        ours = match_calls(golden, calls, tools, AgentConfig(), answer_key=keys).equal
        if not (verdict["valid"] and ours):
            failures.append((gold.case_id, verdict.get("error"), ours))
    assert failures == []


def test_the_environment_records_calls_and_ends_after_the_first_turn_of_them() -> None:
    environment = environment_factory("bfcl")()
    case = Case(
        id="q",
        messages=[{"role": "user", "content": "play"}],
        metadata={"functions": [{"name": "spotify.play", "parameters": {"type": "dict"}}]},
    )
    environment.reset(case)
    before = environment.state_hash()
    assert [t["function"]["name"] for t in environment.tools()] == ["spotify_play"]
    assert environment.tools()[0]["function"]["parameters"]["type"] == "object"
    assert not environment.done
    outcome = environment.call("spotify_play", {"artist": "Maroon 5"})
    assert not outcome.error and "runs no function" in outcome.output
    assert environment.call("nope", {}).error
    assert environment.done and environment.state_hash() != before
    environment.reset(case)
    assert environment.state_hash() == before and not environment.done


def test_an_unknown_category_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="unknown BFCL category 'live_simple'"):
        write_benchmark(tmp_path / "b", ["live_simple"])
    assert not (tmp_path / "b").exists()
