"""A gold file is checked against the units before a replay or a scoring spends anything. A line
naming no unit ends with one line naming the gold file, the line and the fix (exit 2), and leaves
no run directory and no scores behind. A key that does not fit its unit is one no answer can
satisfy: that unit is left out under ``unsatisfiable_key`` (named in a warning, with its line) and
every other unit is replayed and scored; with ``--strict`` it stops everything, as a line naming
no unit does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.runs import RunDirectory
from agent_backtest.trace import Message, ToolCall, ToolDef, dump_record
from agent_backtest.units import Unit
from agent_backtest.units.answer_key import ArgumentKey, CallKey
from tests.scoring.builders import step_unit

runner = CliRunner()
SEARCH = ToolDef(
    name="search_flights",
    parameters={
        "type": "object",
        "properties": {"origin": {"type": "string"}, "destination": {"type": "string"}},
        "required": ["origin", "destination"],
    },
)
FITS = [
    CallKey(
        name="search_flights",
        arguments={
            "origin": ArgumentKey(values=["JFK", "New York"]),
            "destination": ArgumentKey(values=["LAX"]),
        },
    )
]


@pytest.fixture(autouse=True)
def no_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No stray abt.toml or key from the environment."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)


def units(count: int = 3) -> list[Unit]:
    """Units whose golden is one flight search."""
    call = ToolCall(
        id="c1", name="search_flights", arguments={"origin": "JFK", "destination": "LAX"}
    )
    golden = Message(role="assistant", tool_calls=[call])
    return [step_unit(i, golden, session=f"s{i}", tools=[SEARCH]) for i in range(count)]


def write_inputs(tmp_path: Path, lines: list[tuple[str, list[CallKey]]]) -> tuple[Path, Path]:
    """A units file of :func:`units`, and an agent config naming a gold file of ``lines``."""
    units_file = tmp_path / "units.jsonl"
    units_file.write_bytes(b"".join(dump_record(u) + b"\n" for u in units()))
    gold = "".join(
        json.dumps({"unit_id": unit_id, "calls": [c.model_dump() for c in calls]}) + "\n"
        for unit_id, calls in lines
    )
    (tmp_path / "gold.jsonl").write_text(gold)
    config = tmp_path / "agent.toml"
    config.write_text('answer_keys = "gold.jsonl"\n')
    return units_file, config


def abt(*args: object) -> tuple[int, str]:
    """Run ``abt`` in-process: exit code and everything it printed."""
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout + result.stderr


def replay(units_file: Path, config: Path, out: Path, *extra: object) -> tuple[int, str]:
    """``abt replay`` of the units on the mock model that answers with production's answer."""
    return abt(
        "replay", units_file, "--model", "mock/golden", "--agent-config", config, "--out", out,
        *extra,
    )  # fmt: skip


def refused_line(code: int, output: str) -> str:
    """The one error line of a refused command."""
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("abt: error: "), output
    assert "Traceback" not in output
    return " ".join(lines[0].split())


def ids() -> list[str]:
    """The unit ids of :func:`units`."""
    return [u.unit_id for u in units()]


def test_a_line_naming_no_unit_stops_the_replay_before_its_directory(tmp_path: Path) -> None:
    first, second, _ = ids()
    units_file, config = write_inputs(
        tmp_path, [(first, FITS), ("u-typo", FITS), (second, FITS), ("u-other", FITS)]
    )
    out = tmp_path / "runs" / "a"
    line = refused_line(*replay(units_file, config, out))
    assert line.startswith(f"abt: error: {tmp_path / 'gold.jsonl'}: line 2: unit u-typo")
    assert "not among the 3 units of the inputs (nor are those of 1 more lines)" in line
    assert "remove the line" in line
    assert not out.exists()


def test_a_key_that_does_not_fit_its_unit_stops_a_strict_replay(tmp_path: Path) -> None:
    first, second, _ = ids()
    other = [CallKey(name="find_flights", arguments={})]
    units_file, config = write_inputs(tmp_path, [(first, FITS), (second, other)])
    out = tmp_path / "runs" / "b"
    line = refused_line(*replay(units_file, config, out, "--strict"))
    assert "gold.jsonl: line 2: the answer key lists calls ['find_flights']" in line
    assert "give one key per golden call, in order" in line
    assert not out.exists()


def test_a_key_leaving_out_a_required_parameter_stops_a_strict_replay(tmp_path: Path) -> None:
    (first, *_) = ids()
    partial = [CallKey(name="search_flights", arguments={"origin": ArgumentKey(values=["JFK"])})]
    units_file, config = write_inputs(tmp_path, [(first, partial)])
    out = tmp_path / "runs" / "c"
    line = refused_line(*replay(units_file, config, out, "--strict"))
    assert (
        "gold.jsonl: line 1:" in line and "leaves out destination, which the tool requires" in line
    )
    assert not out.exists()


UNSATISFIABLE_KEYS = {
    "other calls": [CallKey(name="find_flights", arguments={})],
    "a required parameter left out": [
        CallKey(name="search_flights", arguments={"origin": ArgumentKey(values=["JFK"])})
    ],
    "a required parameter only left out": [
        CallKey(
            name="search_flights",
            arguments={
                "origin": ArgumentKey(values=["JFK"]),
                "destination": ArgumentKey(optional=True),
            },
        )
    ],
}


@pytest.mark.parametrize("bad", sorted(UNSATISFIABLE_KEYS))
def test_a_key_no_answer_can_satisfy_leaves_out_its_unit_only(tmp_path: Path, bad: str) -> None:
    first, second, third = ids()
    units_file, config = write_inputs(
        tmp_path, [(first, FITS), (second, UNSATISFIABLE_KEYS[bad]), (third, FITS)]
    )
    out = tmp_path / "runs" / "b"
    code, output = replay(units_file, config, out)
    assert code == 0, output
    said = " ".join(output.split())
    assert (
        f"unsatisfiable_key: 1 unit(s) left out, their key fitting no answer: unit {second}" in said
    )
    assert "(line 2: the answer key of" in said or "(line 2: the answer key lists" in said
    scores = list(RunDirectory(out).read_scores())
    assert sorted(r.unit_id for r in scores) == sorted([first, third])
    assert [r.bucket for r in scores] == ["match", "match"]
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["config"]["selection"]["dropped"] == {"unsatisfiable_key": 1}


def test_score_leaves_out_a_unit_whose_key_fits_no_answer(tmp_path: Path) -> None:
    first, second, third = ids()
    units_file, config = write_inputs(tmp_path, [])
    out = tmp_path / "runs" / "f"
    code, output = abt("replay", units_file, "--model", "mock/golden", "--out", out)
    assert code == 0, output
    gold = [(first, FITS), (second, UNSATISFIABLE_KEYS["other calls"])]
    (tmp_path / "gold.jsonl").write_text(
        "".join(
            json.dumps({"unit_id": u, "calls": [c.model_dump() for c in key]}) + "\n"
            for u, key in gold
        )
    )
    code, output = abt("score", out, "--agent-config", config)
    assert code == 0, output
    assert "unsatisfiable_key: 1 unit(s) left out" in " ".join(output.split())
    by_unit = {r.unit_id: r for r in RunDirectory(out).read_scores()}
    assert by_unit[second].status == "unscored" and by_unit[second].bucket == "unsatisfiable_key"
    assert "gold file line 2: the answer key lists calls" in by_unit[second].unscored_reason
    assert by_unit[first].bucket == by_unit[third].bucket == "match"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["unscored"] == 1
    assert any("unsatisfiable_key" in w for w in summary["warnings"])


def test_keys_for_units_the_selection_leaves_out_are_no_mistake(tmp_path: Path) -> None:
    units_file, config = write_inputs(tmp_path, [(unit_id, FITS) for unit_id in ids()])
    out = tmp_path / "runs" / "d"
    code, output = replay(units_file, config, out, "--limit", "1")
    assert code == 0, output
    assert [r.bucket for r in RunDirectory(out).read_scores()] == ["match"]


def test_score_refuses_a_gold_file_naming_no_unit_of_the_run(tmp_path: Path) -> None:
    units_file, plain = write_inputs(tmp_path, [])
    out = tmp_path / "runs" / "e"
    code, output = abt("replay", units_file, "--model", "mock/golden", "--out", out)
    assert code == 0, output
    scores = (out / "scores.jsonl").read_bytes()
    (tmp_path / "gold.jsonl").write_text(
        json.dumps({"unit_id": "u-typo", "calls": [c.model_dump() for c in FITS]}) + "\n"
    )
    line = refused_line(*abt("score", out, "--agent-config", plain))
    assert "gold.jsonl: line 1: unit u-typo is not among the 3 units of run" in line
    assert (out / "scores.jsonl").read_bytes() == scores
