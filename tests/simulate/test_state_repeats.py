"""State checks, the checks-only mode and repeats, against the demo agent app: its model a
scripted OpenAI-compatible server that deletes the wrong note, its SQLite file the fixture."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.reporting.passk import pass_at_k, pass_hat_k
from agent_backtest.simulate.repeats import repeated
from agent_backtest.simulate.run import read_run_flows
from tests.conftest import ROOT
from tests.fake_openai import FakeOpenAI
from tests.optional import require
from tests.simulate.demo_app import call, demo_agent
from tests.simulate.judge_runs import PASS, verdict_lines, write_config

require("fastapi", "pip install 'agent-backtest[demo]'")
require("uvicorn", "pip install 'agent-backtest[demo]'")

DEMO = ROOT / "examples" / "demo_agent"
FLOWS = """
- id: delete-japan
  family: notes
  expect_tools: [list_notes, delete_note]
  turns:
    - user: Delete my note about the Japan trip.
  state:
    - sql: SELECT title FROM notes ORDER BY id
      expect: [[Groceries]]
- id: list-notes
  family: notes
  turns:
    - user: Which notes do I have?
  state:
    - sql: SELECT count(*) FROM notes
      expect: [[2]]
- id: calendar-day
  family: calendar
  turns:
    - user: What is on my calendar on 2 March?
"""


def wrong_row_model(body: dict[str, Any]) -> str | dict[str, Any]:
    """The agent's model: it deletes note 2 (Groceries) when asked for the Japan trip (note 1)."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return f"Done: {last['content']}"
    said = last["content"]
    if said.startswith("Delete"):
        return call("delete_note", {"id": 2})
    if "notes" in said:
        return call("list_notes", {})
    return call("list_events", {"day": "2026-03-02"})


def target_file(tmp_path: Path, url: str) -> Path:
    text = (DEMO / "target.toml").read_text(encoding="utf-8")
    path = tmp_path / "target.toml"
    path.write_text(text.replace("http://127.0.0.1:8011", url), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def checked_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, bytes, bytes]:
    """The three flows, three times each, decided by checks alone (``--judge none``)."""
    tmp_path = tmp_path_factory.mktemp("state")
    db, run, flows = tmp_path / "demo.db", tmp_path / "run", tmp_path / "flows.yaml"
    flows.write_text(FLOWS, encoding="utf-8")
    with FakeOpenAI(reply=wrong_row_model) as model, demo_agent(db, model.base_url) as url:
        before = db.read_bytes()
        result = CliRunner().invoke(
            app,
            [
                "simulate", "run", str(flows), "--out", str(run),
                "--target", str(target_file(tmp_path, url)),
                "--agent-config", str(DEMO / "agent.toml"), "--fixture-db", str(db),
                "--judge", "none", "--k", "3",
            ],
        )  # fmt: skip
        after = db.read_bytes()
    return run, result, before, after


def test_a_state_check_catches_the_wrong_row_deleted_without_a_judge(
    checked_run: tuple[Path, Any, bytes, bytes],
) -> None:
    run, result, before, after = checked_run
    assert result.exit_code == 0, result.output
    assert after == before  # the check ran before the restore, and the restore came after
    verdicts = {line["flow_id"]: line for line in verdict_lines(run)}
    assert sorted(verdicts) == [
        f"{flow}--{n}" for flow in ("delete-japan", "list-notes") for n in (1, 2, 3)
    ]
    deleted = verdicts["delete-japan--2"]
    assert (deleted["verdict"], deleted["decided_by"], deleted["check"]) == (
        "fail",
        "check",
        "state",
    )
    assert (deleted["owner"], deleted["failure_category"]) == ("agent_execution", "state_mismatch")
    assert "SELECT title FROM notes ORDER BY id" in deleted["evidence"]
    assert '[["Groceries"]]' in deleted["evidence"] and '[["Japan trip"]]' in deleted["evidence"]
    listed = verdicts["list-notes--1"]
    assert (listed["verdict"], listed["decided_by"], listed["check"]) == ("pass", "check", "state")
    judging = json.loads((run / "judging.json").read_text(encoding="utf-8"))
    assert judging["judge"] is None


def test_a_flow_nothing_decides_is_unjudged_and_no_failure(
    checked_run: tuple[Path, Any, bytes, bytes],
) -> None:
    run = checked_run[0]
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    overall, calendar = summary["overall"], summary["families"]["calendar"]
    assert (overall["flows"], overall["passed"], overall["failed"]) == (9, 3, 3)
    assert (overall["unjudged"], calendar["unjudged"], calendar["failed"]) == (3, 3, 0)
    assert summary["stop_reasons"] == {"script_end": 9}


def test_three_repeats_give_three_conversations_a_flow_and_pass_k(
    checked_run: tuple[Path, Any, bytes, bytes],
) -> None:
    run, result = checked_run[0], checked_run[1]
    conversations = [
        json.loads(line) for line in (run / "conversations.jsonl").read_text().splitlines()
    ]
    assert sorted(c["flow_id"] for c in conversations) == sorted(
        f"{flow}--{n}" for flow in ("delete-japan", "list-notes", "calendar-day") for n in (1, 2, 3)
    )
    assert all(c["agent_session_id"] for c in conversations)  # the app's own session ids
    assert all(c["turns"][0]["traceparent"].startswith("00-") for c in conversations)
    flows = [json.loads(line) for line in (run / "flows.jsonl").read_text().splitlines()]
    assert {(f["repeat_of"], f["repeat"]) for f in flows if f["family"] == "notes"} == {
        (flow, n) for flow in ("delete-japan", "list-notes") for n in (1, 2, 3)
    }
    repeats = json.loads((run / "summary.json").read_text(encoding="utf-8"))["overall"]["repeats"]
    assert repeats["k"] == 3 and sorted(repeats["pass_hat_k"]) == ["1", "2", "3"]
    # one flow passes 3 of 3, the other 0 of 3; the calendar flow has no decided conversation
    for k in ("1", "2", "3"):
        hat, at = repeats["pass_hat_k"][k], repeats["pass_at_k"][k]
        assert hat["mean"] == (pass_hat_k(3, 3, int(k)) + pass_hat_k(0, 3, int(k))) / 2
        assert at["mean"] == (pass_at_k(3, 3, int(k)) + pass_at_k(0, 3, int(k))) / 2
        assert (hat["n"], hat["seeds"]) == (2, 2)
    assert "pass^3 0.500" in result.output
    page = (run / "report.html").read_text(encoding="utf-8")
    assert 'id="passk"' in page and "pass^3" in page


def test_sql_state_checks_need_the_fixture_database(tmp_path: Path) -> None:
    flows = tmp_path / "flows.yaml"
    flows.write_text(FLOWS, encoding="utf-8")
    result = CliRunner().invoke(
        app,
        [
            "simulate", "run", str(flows), "--out", str(tmp_path / "run"),
            "--target", str(target_file(tmp_path, "http://127.0.0.1:9")),
            "--agent-config", str(DEMO / "agent.toml"), "--read-only-only", "--judge", "none",
        ],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "--fixture-db FILE" in result.output and "list-notes" in result.output
    assert not (tmp_path / "run").exists()


def test_a_checks_only_run_is_gated_on_the_flows_its_checks_decided(
    checked_run: tuple[Path, Any, bytes, bytes],
) -> None:
    run = checked_run[0]
    met = CliRunner().invoke(app, ["gate", str(run), "--min-pass-rate", "0.5"])
    assert met.exit_code == 0, met.output
    missed = CliRunner().invoke(app, ["gate", str(run), "--min-pass-rate", "0.6"])
    assert missed.exit_code == 3, missed.output


def test_the_repeats_of_an_earlier_run_are_repeated_as_the_flows_they_repeat(
    checked_run: tuple[Path, Any, bytes, bytes],
) -> None:
    played = read_run_flows(checked_run[0])
    again = repeated(played, 2)
    assert [flow.id for flow in again] == [
        f"{flow}--{n}" for flow in ("delete-japan", "list-notes", "calendar-day") for n in (1, 2)
    ]
    assert {flow.repeat_of for flow in again} == {"delete-japan", "list-notes", "calendar-day"}
    once = repeated(played, 1)
    assert [(flow.id, flow.repeat) for flow in once] == [
        ("delete-japan", None), ("list-notes", None), ("calendar-day", None)
    ]  # fmt: skip
    assert once[0].state == played[0].state


def test_a_judge_later_decides_only_what_the_checks_left_unjudged(
    checked_run: tuple[Path, Any, bytes, bytes], tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(checked_run[0], run)
    with FakeOpenAI(reply=lambda body: json.dumps(PASS)) as grader:
        config = write_config(tmp_path, ("main", grader.base_url))
        result = CliRunner().invoke(
            app,
            ["simulate", "judge", str(run), "--resume", "--judge", "main/grader",
             "--config", str(config)],
        )  # fmt: skip
        asked = grader.total
    assert result.exit_code == 0, result.output
    assert asked == 3  # the calendar flow's three conversations, nothing the checks decided
    verdicts = {line["flow_id"]: line for line in verdict_lines(run)}
    assert len(verdicts) == 9
    assert {verdicts[f"calendar-day--{n}"]["decided_by"] for n in (1, 2, 3)} == {"judge"}
    assert verdicts["delete-japan--1"]["check"] == "state"
