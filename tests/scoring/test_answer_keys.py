"""Answer keys and equivalent tools through the scorer and ``abt score``: what reaches a record,
and what a bad gold file says."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.runs import ResultRecord, ResultWriter, RunDirectory
from agent_backtest.scoring.buckets import Scorer
from agent_backtest.trace import Message, ToolCall, ToolDef
from agent_backtest.units import AgentConfig, Unit
from agent_backtest.units.answer_key import ArgumentKey, CallKey
from tests.manifests import replay_manifest
from tests.scoring.builders import answer_to, step_unit

runner = CliRunner()
SEARCH = ToolDef(
    name="search_flights",
    parameters={
        "type": "object",
        "properties": {
            "origin": {"type": "string"},
            "destination": {"type": "string"},
            "cabin": {"type": "string", "default": "economy"},
        },
        "required": ["origin", "destination"],
    },
)
FIND = SEARCH.model_copy(update={"name": "find_flights"})
AGENT = AgentConfig(equivalent_tools=[["search_flights", "find_flights"]])


def search(name: str = "search_flights", **arguments: object) -> Message:
    """An answer with one flight-search call."""
    return Message(role="assistant", tool_calls=[ToolCall(id="c1", name=name, arguments=arguments)])


def unit(index: int, golden: Message, key: list[CallKey] | None = None) -> Unit:
    """A unit offering both search tools."""
    return step_unit(
        index, golden, session="s", tools=[SEARCH, FIND], question="JFK to LAX", answer_key=key
    )


def result(u: Unit, answer: Message) -> ResultRecord:
    """The candidate's answer to ``u``."""
    return answer_to(u, answer)


def score(u: Unit, answer: Message, agent: AgentConfig = AGENT):
    """The score record of one answer, without a judge."""
    return asyncio.run(Scorer(agent, None, False, "test").score(u, result(u, answer)))


KEY = [
    CallKey(
        name="search_flights",
        arguments={
            "origin": ArgumentKey(values=["JFK", "New York"]),
            "destination": ArgumentKey(values=["LAX"]),
            "cabin": ArgumentKey(values=["business"], optional=True),
        },
    )
]


def test_equivalent_tool_is_a_lenient_match_only() -> None:
    """Right arguments on an equivalent tool: match_equivalent, agreeing, never strict, and the
    reason names both tools."""
    u = unit(0, search(origin="JFK", destination="LAX"))
    record = score(u, search("find_flights", origin="JFK", destination="LAX"))
    assert (record.bucket, record.score, record.strict) == ("match_equivalent", 1.0, False)
    assert "find_flights" in record.reason and "search_flights" in record.reason
    same = score(u, search(origin="JFK", destination="LAX"))
    assert (same.bucket, same.strict, same.reason) == ("match", True, None)
    wrong_args = score(u, search("find_flights", origin="JFK", destination="SFO"))
    assert wrong_args.bucket == "args_mismatch"
    outside = score(u, search("find_flights", origin="JFK", destination="LAX"), AgentConfig())
    assert outside.bucket == "wrong_tool"


def test_unit_answer_key_is_the_reference() -> None:
    """A unit's key accepts what production's one call would refuse, and refuses the rest."""
    u = unit(1, search(origin="JFK", destination="LAX"), KEY)
    assert score(u, search(origin="new york", destination="LAX", cabin="business")).bucket == (
        "match"
    )
    assert score(u, search(origin="JFK", destination="LAX", cabin="first")).bucket == (
        "args_mismatch"
    )
    plain = unit(2, search(origin="JFK", destination="LAX"))
    assert score(plain, search(origin="New York", destination="LAX")).bucket == "args_mismatch"


def test_unit_key_must_fit_the_golden_and_the_schema() -> None:
    """A key for other calls, or one that leaves out a required parameter, is refused."""
    with pytest.raises(ValueError, match="one key per golden call"):
        unit(3, search(origin="JFK", destination="LAX"), KEY * 2)
    partial = [CallKey(name="search_flights", arguments={"origin": ArgumentKey(values=["JFK"])})]
    with pytest.raises(ValueError, match="leaves out destination, which the tool requires"):
        unit(4, search(origin="JFK", destination="LAX"), partial)


def run_with(tmp_path: Path, units: list[Unit], answers: list[Message]) -> Path:
    """A run directory holding ``units`` and the candidate's ``answers``."""
    directory = RunDirectory(tmp_path / "run")
    directory.create(overwrite=False)
    directory.write_units(units)
    replay_manifest("openai/candidate").save(directory.manifest_path)
    writer = ResultWriter(directory.results_path)
    for u, answer in zip(units, answers, strict=True):
        writer.append(result(u, answer))
    writer.close()
    return directory.path


def gold_line(u: Unit, calls: list[CallKey]) -> str:
    """One line of a gold file."""
    return json.dumps({"unit_id": u.unit_id, "calls": [c.model_dump() for c in calls]}) + "\n"


def test_gold_file_fills_units_without_a_key(tmp_path: Path) -> None:
    """``answer_keys`` in the agent config names a gold file; its keys score the run."""
    u = unit(5, search(origin="JFK", destination="LAX"))
    run = run_with(tmp_path, [u], [search(origin="New York", destination="LAX")])
    (tmp_path / "gold.jsonl").write_text(gold_line(u, KEY))
    (tmp_path / "agent.toml").write_text('answer_keys = "gold.jsonl"\n')
    plain = runner.invoke(app, ["score", str(run)])
    assert plain.exit_code == 0, plain.output
    assert [r.bucket for r in RunDirectory(run).read_scores()] == ["args_mismatch"]
    keyed = runner.invoke(app, ["score", str(run), "--agent-config", str(tmp_path / "agent.toml")])
    assert keyed.exit_code == 0, keyed.output
    assert [r.bucket for r in RunDirectory(run).read_scores()] == ["match"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"unit_id": "u-1", "calls": [}\n', "line 1: not valid JSON"),
        (
            '{"unit_id": "u-1", "calls": [{"name": "f", "arguments": {"a": {}}}]}\n',
            "not an answer key",
        ),
    ],
)
def test_bad_gold_file_is_one_line_naming_the_place(
    tmp_path: Path, content: str, message: str
) -> None:
    """A gold file that cannot be read ends with its name, the line and what is wrong; exit 2
    (a key that does not fit its unit leaves that unit out: tests/units/test_gold.py)."""
    u = unit(6, search(origin="JFK", destination="LAX"))
    run = run_with(tmp_path, [u], [search(origin="JFK", destination="LAX")])
    (tmp_path / "gold.jsonl").write_text(content)
    (tmp_path / "agent.toml").write_text('answer_keys = "gold.jsonl"\n')
    outcome = runner.invoke(
        app, ["score", str(run), "--agent-config", str(tmp_path / "agent.toml")]
    )
    assert outcome.exit_code == 2
    assert "gold.jsonl" in outcome.stderr and message in outcome.stderr
    assert "Traceback" not in outcome.output


def test_missing_gold_file_is_named(tmp_path: Path) -> None:
    """An agent config naming a gold file that is not there is refused before scoring."""
    u = unit(7, search(origin="JFK", destination="LAX"))
    run = run_with(tmp_path, [u], [search(origin="JFK", destination="LAX")])
    (tmp_path / "agent.toml").write_text('answer_keys = "nowhere.jsonl"\n')
    outcome = runner.invoke(
        app, ["score", str(run), "--agent-config", str(tmp_path / "agent.toml")]
    )
    assert outcome.exit_code == 2
    assert "agent.toml: answer_keys" in outcome.stderr and "nowhere.jsonl" in outcome.stderr
