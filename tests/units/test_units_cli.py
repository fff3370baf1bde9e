"""``abt units`` and ``abt show`` on agent versions, exclusion files and units files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.runs import ResultRecord
from agent_backtest.scoring.buckets import Scorer
from agent_backtest.units import AgentConfig, Unit
from tests.conftest import FIXTURES
from tests.formats.test_agent_versions import OTLP_EVENTS, otlp_lines, set_resource, write_lines

SESSION_STEPS = FIXTURES / "session_steps" / "example.json"  # agent 2025.03.1, 7 units
KOOG = FIXTURES / "traces" / "koog-2025-08-26.trace.json"  # version 0.3.0, 2 units
CHAT_LOG = FIXTURES / "chat_log" / "example.jsonl"  # no version, 7 units
runner = CliRunner()


def run(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def written(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_agent_version_selects_units_and_counts_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "units.jsonl"
    code, stdout, _ = run(
        "units", SESSION_STEPS, KOOG, CHAT_LOG, "-o", out, "--agent-version", "0.3.0", "--json"
    )
    assert code == 0
    report = json.loads(stdout)
    assert {u["agent_version"] for u in written(out)} == {"0.3.0"}
    assert len(written(out)) == 2
    assert report["dropped"] == {"other_agent_version": 7, "agent_version_not_recorded": 7}

    code, stdout, _ = run(
        "units",
        SESSION_STEPS,
        KOOG,
        "-o",
        out,
        "--agent-version",
        "0.3.0",
        "--agent-version",
        "2025.03.1",
        "--json",
    )
    assert code == 0 and len(written(out)) == 9 and json.loads(stdout)["dropped"] == {}


def test_exclusion_says_how_many_of_its_sessions_the_input_holds(tmp_path: Path) -> None:
    excluded = tmp_path / "held-out.json"
    excluded.write_text(json.dumps({"sessions": ["sess-b210", "sess-from-elsewhere"]}))
    out = tmp_path / "units.jsonl"
    code, stdout, stderr = run(
        "units", SESSION_STEPS, "-o", out, "--exclude-sessions", excluded, "--json"
    )
    assert code == 0
    assert f"--exclude-sessions {excluded}: 1 of its 2 sessions are in the input" in stderr
    report = json.loads(stdout)
    assert report["excluded_sessions"] == {"file": str(excluded), "sessions": 2, "matched": 1}
    assert report["dropped"] == {"excluded_session": 2}
    assert {u["session_id"] for u in written(out)} == {"sess-7f3a"}

    code, stdout, stderr = run("units", SESSION_STEPS, "-o", out, "--exclude-sessions", excluded)
    assert code == 0 and "1 of its 2 sessions are in the input" in stderr


def test_a_malformed_exclusion_file_is_one_line_naming_the_place(tmp_path: Path) -> None:
    excluded = tmp_path / "held-out.json"
    excluded.write_text('["sess-b210", 7]')
    out = tmp_path / "units.jsonl"
    code, _, stderr = run("units", SESSION_STEPS, "-o", out, "--exclude-sessions", excluded)
    assert code == 2
    assert stderr.strip().splitlines() == [
        f"abt: error: {excluded}: $[1]: expected a session id, or a session object with a "
        "session_id or id"
    ]
    assert not out.exists()


def test_units_file_input_is_reclassified_under_the_router_rules_given(tmp_path: Path) -> None:
    first = tmp_path / "units.jsonl"
    assert run("units", SESSION_STEPS, "-o", first)[0] == 0
    kinds = {u["unit_id"]: (u["node"], u["kind"]) for u in written(first)}
    assert sorted(set(kinds.values())) == [
        ("billing_agent", "action"),
        ("order_status_agent", "action"),
        ("router", "router"),
    ]

    again = tmp_path / "again.jsonl"
    code, stdout, _ = run("units", first, "-o", again, "--router-nodes", "billing_agent", "--json")
    assert code == 0
    report = json.loads(stdout)
    assert report["inputs"] == [
        {
            "file": str(first),
            "format": "units",
            "units": {"action": 2, "router": 5},
            "reclassified": True,
        }
    ]
    assert {(u["node"], u["kind"]) for u in written(again)} == {
        ("billing_agent", "router"),
        ("order_status_agent", "action"),
        ("router", "router"),
    }

    # A config's routing prefixes replace the defaults: go_to_* no longer routes.
    config = tmp_path / "agent.toml"
    config.write_text('routing_tool_prefixes = ["lookup_"]\nend_session_tools = []\n')
    code, _, _ = run("units", first, "-o", again, "--agent-config", config, "--steps", "router")
    assert code == 0
    assert {u["node"] for u in written(again)} == {"order_status_agent"}

    # Reading options of traces do nothing to a units file: said, not ignored.
    code, _, stderr = run("units", first, "-o", again, "--tools", FIXTURES / "missing.json")
    assert code == 2
    assert stderr.strip() == "abt: error: --tools: applies to trace files, not to a units file"

    # No router rules: the kinds stay as the file has them.
    code, stdout, _ = run("units", first, "-o", again, "--steps", "router")
    assert code == 0 and {u["node"] for u in written(again)} == {"router"}
    assert "kinds as written" in stdout


def test_show_prints_agent_versions(tmp_path: Path) -> None:
    code, stdout, _ = run("show", SESSION_STEPS, "--session", "sess-b210")
    assert code == 0 and "agent acme-support 2025.03.1" in stdout
    units = tmp_path / "units.jsonl"
    run("units", KOOG, "-o", units)
    unit_id = written(units)[0]["unit_id"]
    code, stdout, _ = run("show", units, "--unit", unit_id)
    assert code == 0 and "agent 0.3.0" in stdout
    # Across a deploy the session has no one version: each step shows its own.
    documents = otlp_lines(OTLP_EVENTS)
    set_resource(documents[1], "service.version", "1.3.0")
    deploy = write_lines(tmp_path / "deploy.jsonl", documents)
    code, stdout, _ = run("show", deploy)
    steps = [line for line in stdout.splitlines() if line.startswith("  [llm]")]
    assert code == 0 and "agent weather-agent" in stdout.splitlines()
    assert [line.rsplit("agent ", 1)[1] for line in steps] == ["1.2.0", "1.3.0"]
    code, stdout, _ = run("show", CHAT_LOG, "--session", "r1")
    assert code == 0
    assert not [line for line in stdout.splitlines() if line.lstrip().startswith("agent ")]
    assert "  agent " not in stdout  # no step records one


def test_the_score_record_carries_the_units_agent_version(tmp_path: Path) -> None:
    units = tmp_path / "units.jsonl"
    run("units", KOOG, "-o", units)
    unit = Unit.model_validate(written(units)[0])
    result = ResultRecord(
        unit_id=unit.unit_id,
        repeat=0,
        session_id=unit.session_id,
        model="mock/candidate",
        request_sha="sha256:x",
        attempts=1,
        response=unit.golden,
    )
    scorer = Scorer(AgentConfig(), judge=None, exact_strings=False, scoring_id="s")
    score = asyncio.run(scorer.score(unit, result))
    assert score.agent_version == "0.3.0"
