"""The deterministic checks before the judge, through ``abt simulate judge`` with a judge on
127.0.0.1: what each decides, and that the judge's own owner is kept beside the check's."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.simulate.models import ConversationRecord, Flow, ToolActivity
from agent_backtest.simulate.tool_schema import schema_problems
from tests.fake_openai import FakeOpenAI
from tests.simulate.judge_runs import (
    FAIL,
    NOTES_TOOLS,
    PASS,
    conversation,
    note_flow,
    replies,
    turn,
    verdict_lines,
    write_config,
    write_run,
)

runner = CliRunner()


def judge_command(run: Path, config: Path, *extra: str) -> list[str]:
    """The arguments of ``abt simulate judge RUN`` with the judge of ``config``."""
    return [
        "simulate",
        "judge",
        str(run),
        "--judge",
        "main/grader",
        "--config",
        str(config),
        *extra,
    ]


def judged(
    tmp_path: Path,
    record: ConversationRecord,
    flow: Flow | None = None,
    answer: Any = PASS,
    extra: list[str] | None = None,
) -> tuple[dict[str, Any], FakeOpenAI, str]:
    """The verdict on one conversation, the judge server, and the command's output."""
    run = write_run(tmp_path / "run", [flow or note_flow("f1")], [record])
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(NOTES_TOOLS))
    with FakeOpenAI(reply=replies(answer)) as judge:
        config = write_config(tmp_path, ("main", judge.base_url))
        result = runner.invoke(
            app,
            judge_command(run, config, "--tools", str(tools), *(extra or [])),
        )
    assert result.exit_code == 0, result.output
    (verdict,) = verdict_lines(run)
    return verdict, judge, result.output


def test_a_transport_failure_is_uncertain_and_never_judged(tmp_path: Path) -> None:
    record = conversation("f1", [], transport_error="connection refused by 127.0.0.1:8011")
    verdict, judge, _ = judged(tmp_path, record)
    assert verdict["verdict"] == "uncertain" and verdict["reason"] == "transport_error"
    assert verdict["decided_by"] == "check" and verdict["check"] == "transport"
    assert "connection refused" in verdict["evidence"]
    assert judge.total == 0


def test_an_empty_final_answer_fails_whatever_the_judge_says(tmp_path: Path) -> None:
    record = conversation("f1", [turn(final="  ")])
    verdict, judge, _ = judged(tmp_path, record, answer=PASS)
    assert verdict["verdict"] == "fail" and verdict["check"] == "empty_final_answer"
    assert verdict["owner"] == "agent_rendering" and verdict["failed_turns"] == [1]
    assert verdict["decided_by"] == "check" and "score" not in verdict  # no score is not 0
    assert judge.total == 1


def test_an_expected_tool_neither_offered_nor_called_is_routings(tmp_path: Path) -> None:
    record = conversation("f1", [turn(calls=[], offered=["list_notes"], final="I cannot.")])
    verdict, judge, _ = judged(tmp_path, record, answer=FAIL)
    assert verdict["verdict"] == "fail" and verdict["check"] == "expected_tool_not_offered"
    assert verdict["owner"] == "agent_routing"
    assert verdict["judge_reported_owner"] == "model"  # the judge blamed the model
    assert "add_note" in verdict["evidence"] and judge.total == 1


def test_an_expected_tool_offered_but_not_called_is_left_to_the_judge(tmp_path: Path) -> None:
    record = conversation("f1", [turn(calls=[], offered=["add_note"], final="Saved it.")])
    verdict, _, _ = judged(tmp_path, record, answer=FAIL)
    assert verdict["decided_by"] == "judge" and verdict["owner"] == "model"


def test_a_target_that_reports_no_offer_leaves_routing_to_the_judge(tmp_path: Path) -> None:
    record = conversation("f1", [turn(calls=[], offered=None, final="Saved it.")])
    verdict, _, _ = judged(tmp_path, record, answer=FAIL)
    assert verdict["decided_by"] == "judge"


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"body": "milk"}, "arguments.title: required, missing"),
        ({"title": 3}, "arguments.title: expected string, got integer"),
        ({"title": "groceries", "colour": "red"}, "arguments.colour: not a parameter"),
        ('{"title": "groceries"', "arguments are not a JSON object"),
    ],
)
def test_a_call_its_schema_rejects_is_the_models(
    tmp_path: Path, arguments: Any, problem: str
) -> None:
    call = ToolActivity(name="add_note", arguments=arguments, error="bad arguments")
    verdict, _, _ = judged(tmp_path, conversation("f1", [turn(calls=[call])]), answer=PASS)
    assert verdict["verdict"] == "fail" and verdict["check"] == "tool_call_rejected_by_schema"
    assert verdict["owner"] == "model" and verdict["failed_turns"] == [1]
    assert problem in verdict["evidence"]


def test_a_users_check_decides_with_its_own_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "house_rules.py").write_text(
        "from agent_backtest.simulate.checks import CheckFailure\n\n"
        "def polite(flow, conversation):\n"
        "    for turn in conversation.turns:\n"
        "        if 'please' not in (turn.final_text or '').lower():\n"
        "            return CheckFailure('agent_execution', 'impolite', [turn.index],\n"
        "                                f'turn {turn.index} never says please')\n"
        "    return None\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "house_rules", raising=False)
    verdict, _, output = judged(
        tmp_path, conversation("f1"), answer=PASS, extra=["--check", "house_rules:polite"]
    )
    assert verdict["check"] == "house_rules:polite" and verdict["owner"] == "agent_execution"
    assert verdict["evidence"] == "turn 1 never says please"
    assert "fail f1 [agent_execution impolite turns 1]" in output


def test_a_good_conversation_passes_every_check_and_the_judge_decides(tmp_path: Path) -> None:
    verdict, judge, _ = judged(tmp_path, conversation("f1"), answer=PASS)
    assert verdict["verdict"] == "pass" and verdict["decided_by"] == "judge"
    assert judge.total == 1


def test_the_default_owners_reach_beyond_the_agent(tmp_path: Path) -> None:
    answer = {**FAIL, "owner": "user_simulator", "failure_category": "left_its_task"}
    verdict, judge, _ = judged(tmp_path, conversation("f1"), answer=answer)
    assert (verdict["verdict"], verdict["owner"]) == ("fail", "user_simulator")
    system = judge.bodies[0]["messages"][0]["content"]
    assert "- user_simulator: the simulated user broke its instructions" in system
    assert "- environment: the target or its tools failed outside the agent" in system


def test_an_owners_file_replaces_the_taxonomy_the_judge_reads(tmp_path: Path) -> None:
    owners = tmp_path / "owners.txt"
    owners.write_text(
        "# who fixes what\nagent_routing: the router\nmodel: the model team\n"
        "agent_execution: the harness\nagent_rendering: the web app\n"
        "search_index: the search team\n"
    )
    answer = {**FAIL, "owner": "search_index"}
    verdict, judge, _ = judged(
        tmp_path, conversation("f1"), answer=answer, extra=["--owners", str(owners)]
    )
    assert verdict["owner"] == "search_index" and judge.total == 1
    system = judge.bodies[0]["messages"][0]["content"]
    assert "- search_index: the search team" in system and "backend_data" not in system


def test_an_owners_file_without_the_checks_owners_is_refused(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", [note_flow("f1")], [conversation("f1")])
    owners = tmp_path / "owners.txt"
    owners.write_text("search_index: the search team\n")
    config = write_config(tmp_path, ("main", "http://127.0.0.1:9/v1"))
    result = runner.invoke(
        app,
        judge_command(run, config, "--owners", str(owners)),
    )
    assert result.exit_code == 2
    lacking = "the owners lack agent_routing, model, agent_execution, agent_rendering"
    assert f"--owners: {lacking}" in result.output
    assert not (run / "verdicts.jsonl").exists()


def test_a_check_that_cannot_be_imported_is_one_line_naming_the_flag(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", [note_flow("f1")], [conversation("f1")])
    config = write_config(tmp_path, ("main", "http://127.0.0.1:9/v1"))
    result = runner.invoke(
        app,
        judge_command(run, config, "--check", "no_such_module_here:check"),
    )
    assert result.exit_code == 2
    assert result.output.startswith("abt: error: --check: 'no_such_module_here:check'")
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("value", "schema", "problems"),
    [
        (1.0, {"type": "integer"}, []),
        (True, {"type": "integer"}, ["arguments: expected integer, got boolean"]),
        ("b", {"enum": ["a"]}, ["arguments: 'b' is not one of ['a']"]),
        ([1, "x"], {"type": "array", "items": {"type": "integer"}}, ["arguments[1]: expected"]),
        ({"a": None}, {"properties": {"a": {"type": ["string", "null"]}}}, []),
        ("x", {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}, ["matches none"]),
        ("x", {"type": "string", "pattern": "^y$"}, []),  # not checked: never failed on a guess
    ],
)
def test_the_schema_check_holds_calls_to_the_keywords_apis_enforce(
    value: Any, schema: dict[str, Any], problems: list[str]
) -> None:
    found = schema_problems(value, schema)
    assert len(found) == len(problems)
    for line, expected in zip(found, problems, strict=True):
        assert expected in line
