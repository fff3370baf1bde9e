"""The abt command driven in-process: outputs, reports, privacy and errors for people."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app

runner = CliRunner()


def run(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_ingest_reports_each_input_and_writes_private_jsonl(
    tau_trajectories: Path, tau_tools: Path, tmp_path: Path
) -> None:
    out = tmp_path / "new" / "sessions.jsonl"
    code, stdout, _ = run("ingest", tau_trajectories, "--tools", tau_tools, "-o", out, "--json")
    assert code == 0
    report = json.loads(stdout)["inputs"][0]
    assert report["format"] == "tau_bench"
    assert report["sessions"] == 100
    assert report["steps"] == {"llm": 1381, "tool": 621}
    assert report["units"] == {"action": 1381}
    assert report["skips"] == {}
    assert report["tools_supplied"] == 1381 and report["without_tool_definitions"] == 0
    assert len(out.read_text().splitlines()) == 100
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert stat.S_IMODE(out.parent.stat().st_mode) == 0o700


def test_ingest_table_names_missing_tool_definitions(tau_trajectories: Path) -> None:
    code, stdout, _ = run("ingest", tau_trajectories)
    assert code == 0
    assert "tau_bench" in stdout and "sessions  100" in stdout
    assert "1381 LLM steps lack their tool definitions" in stdout


def test_units_selection_and_split(tau_trajectories: Path, tau_tools: Path, tmp_path: Path) -> None:
    out = tmp_path / "units.jsonl"
    code, stdout, _ = run(
        "units",
        tau_trajectories,
        "--tools",
        tau_tools,
        "-o",
        out,
        "--val-fraction",
        "0.25",
        "--split",
        "test",
        "--json",
    )
    assert code == 0
    result = json.loads(stdout)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == result["written"]["action"] == result["written"]["split test"]
    assert len(lines) + result["dropped"]["other_split"] == 1381
    assert {u["split"] for u in lines} == {"test"}
    assert all(u["schema"] == "abt.unit/1" for u in lines)

    excluded = tmp_path / "excluded.jsonl"
    excluded.write_text(out.read_text())
    val = tmp_path / "val.jsonl"
    code, stdout, _ = run(
        "units",
        tau_trajectories,
        "-o",
        val,
        "--exclude-sessions",
        excluded,
        "--limit",
        "3",
        "--json",
    )
    assert code == 0
    val_units = [json.loads(line) for line in val.read_text().splitlines()]
    assert len(val_units) == 3
    assert not {u["session_id"] for u in val_units} & {u["session_id"] for u in lines}


def test_show_lists_and_shows_sessions_and_units(tau_trajectories: Path, tmp_path: Path) -> None:
    code, stdout, _ = run("show", tau_trajectories)
    assert code == 0 and "100 sessions" in stdout
    code, stdout, _ = run("show", tau_trajectories, "--session", "tau-task3-trial1")
    assert code == 0
    assert "sofia_kim_7287" in stdout and "get_user_details" in stdout
    assert "timing not recorded" in stdout
    units = tmp_path / "units.jsonl"
    run("units", tau_trajectories, "-o", units, "--limit", "2")
    code, stdout, _ = run("show", units)
    assert code == 0 and "2 units" in stdout
    unit_id = json.loads(units.read_text().splitlines()[1])["unit_id"]
    code, stdout, _ = run("show", units, "--unit", unit_id)
    assert code == 0 and "golden" in stdout and "Airline Agent Policy" in stdout


def test_schema_prints_json_schema() -> None:
    code, stdout, _ = run("schema")
    assert code == 0
    document = json.loads(stdout)
    assert {"session", "unit"} <= set(document)
    assert "schema" in document["session"]["properties"]
    code, stdout, _ = run("schema", "unit")
    assert json.loads(stdout)["title"] == "Unit"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ingest", "missing.json"], "missing.json: no such file"),
        (["ingest", "{bad}"], "cannot tell the format"),
        (["ingest", "{tau}", "--format", "nope"], "unknown format 'nope'"),
        (["ingest", "{tau}", "--tools", "{bad}"], "line 1, column"),
        (["units", "{tau}", "-o", "{out}", "--agent-config", "{bad}"], "not valid TOML"),
    ],
)
def test_user_errors_are_one_line_with_exit_code_2(
    args: list[str], message: str, tau_trajectories: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("{not json or toml")
    paths = {"{tau}": str(tau_trajectories), "{bad}": str(bad), "{out}": str(tmp_path / "o")}
    code, stdout, stderr = run(*[paths.get(a, a) for a in args])
    assert code == 2
    assert message in stderr
    assert len(stderr.strip().splitlines()) == 1 and stderr.startswith("abt: error: ")
    assert "Traceback" not in stderr + stdout


def test_split_without_fraction_is_a_usage_error(tau_trajectories: Path, tmp_path: Path) -> None:
    code, _, stderr = run("units", tau_trajectories, "-o", tmp_path / "u", "--split", "val")
    assert code == 2 and "--val-fraction" in stderr


def test_failed_write_keeps_the_earlier_output(tau_trajectories: Path, tmp_path: Path) -> None:
    out = tmp_path / "sessions.jsonl"
    out.write_text("earlier\n")
    broken = tmp_path / "broken.json"
    broken.write_text('[{"task_id": 1, "traj": []}, {"task_id": 2, "traj": [}')
    code, _, stderr = run("ingest", tau_trajectories, broken, "-o", out)
    assert code == 2 and "broken.json: line 1 column" in stderr
    assert out.read_text() == "earlier\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_dash_writes_records_to_stdout_and_the_report_to_stderr(
    tau_trajectories: Path, tau_tools: Path
) -> None:
    code, stdout, stderr = run("units", tau_trajectories, "--tools", tau_tools, "--limit", "3",
                               "-o", "-")  # fmt: skip
    assert code == 0
    units = [json.loads(line) for line in stdout.splitlines()]
    assert len(units) == 3 and all(u["schema"] == "abt.unit/1" for u in units)
    assert "wrote 3 units to standard output" in " ".join(stderr.split())
    code, stdout, _ = run("ingest", tau_trajectories, "-o", "-")
    assert code == 0 and len(stdout.splitlines()) == 100
    code, stdout, _ = run("profile", tau_trajectories, "-o", "-")
    assert code == 0 and json.loads(stdout)["schema"] == "abt.profile/2"


def test_config_path_names_the_file_in_effect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, stdout, stderr = run("config", "path")
    assert code == 0 and stdout.strip() == "none: the built-in defaults apply"
    assert "agent-backtest/abt.toml (absent)" in stderr
    (tmp_path / "abt.toml").write_text("[aliases]\n")
    code, stdout, _ = run("config", "path")
    assert stdout.strip() == str(tmp_path / "abt.toml")
