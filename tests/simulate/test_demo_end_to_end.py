"""``abt simulate run`` against the demo agent app, as a team would run it: the example flows
(nine, three families) over server-sent events, its model a scripted OpenAI-compatible server,
a scripted judge, and the app's SQLite database isolated as a fixture."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.conftest import ROOT
from tests.fake_openai import FakeOpenAI
from tests.optional import require
from tests.simulate.demo_app import call, demo_agent
from tests.simulate.judge_runs import PASS, flow_of, verdict_lines, write_config
from tests.simulate.pages import open_page, visible

# the demo app the tests start is a FastAPI app served by uvicorn
require("fastapi", "pip install 'agent-backtest[demo]'")
require("uvicorn", "pip install 'agent-backtest[demo]'")

DEMO = ROOT / "examples" / "demo_agent"
DAYS = {"2 March": "2026-03-02", "the day after": "2026-03-03"}
DELETED_BLINDLY = {
    "verdict": "fail",
    "score": 15,
    "owner": "agent_execution",
    "failure_category": "acted_without_lookup",
    "failed_turns": [1],
    "evidence": "Turn 1 deleted note 1 without listing the notes to find the dentist one.",
}


def demo_model(body: dict[str, Any]) -> str | dict[str, Any]:
    """The demo agent's model, scripted from the user's words (one tool call, then an answer)."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return f"Here is what I found: {last['content']}"
    said = last["content"]
    if said.startswith("Save a note"):
        return call("add_note", {"title": "Packing list", "body": "passport, charger"})
    if "notes" in said or "what do i have" in said:
        return call("list_notes", {})
    if said.startswith("Delete"):
        return call("delete_note", {"id": 1})  # no look-up first: the judge fails it
    if said.startswith("Book"):
        return call("add_event", {"title": "Flight"})  # no starts_at: the schema check fails it
    for words, day in DAYS.items():
        if words in said:
            return call("list_events", {"day": day})
    return "I can keep notes and a calendar for you; I cannot order food."


def judge(body: dict[str, Any]) -> str:
    """A scripted judge: passes, one failure with evidence, and one answer that is not JSON."""
    flow = flow_of(body)
    if flow == "notes-delete":
        return json.dumps(DELETED_BLINDLY)
    if flow == "help-capabilities":
        return "The agent did fine, I think."
    return json.dumps(PASS)


def demo_target(tmp_path: Path, url: str) -> Path:
    """The example target file, pointed at the app the test started."""
    text = (DEMO / "target.toml").read_text(encoding="utf-8")
    path = tmp_path / "target.toml"
    path.write_text(text.replace("http://127.0.0.1:8011", url), encoding="utf-8")
    return path


@dataclass
class DemoRun:
    """The run of the example flows, and what the test saw while it ran."""

    path: Path
    exit_code: int
    output: str
    database_restored: bool


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """``abt simulate run`` of the example flows through the app, judged; asked for before
    ``chromium``, whose event loop would stop the run's own."""
    tmp_path = tmp_path_factory.mktemp("demo")
    db, run = tmp_path / "demo.db", tmp_path / "run"
    with FakeOpenAI(reply=demo_model) as model, demo_agent(db, model.base_url) as url:
        original = db.read_bytes()  # the app made its tables and sample rows on start
        with FakeOpenAI(reply=judge) as grader:
            config = write_config(tmp_path, ("main", grader.base_url))
            arguments = [
                "simulate", "run", str(DEMO / "flows.yaml"), "--out", str(run),
                "--target", str(demo_target(tmp_path, url)),
                "--agent-config", str(DEMO / "agent.toml"), "--fixture-db", str(db),
                "--judge", "main/grader", "--config", str(config),
                "--tools", str(DEMO / "tools.json"),
            ]  # fmt: skip
            result = CliRunner().invoke(app, arguments)
        restored = db.read_bytes() == original
    return DemoRun(run, result.exit_code, result.output, restored)


def test_the_example_flows_give_every_verdict_kind_and_the_database_back(
    demo_run: DemoRun,
) -> None:
    run = demo_run.path
    assert demo_run.exit_code == 0, demo_run.output  # a finished run; abt gate sets the bar
    assert demo_run.database_restored
    verdicts = {line["flow_id"]: line for line in verdict_lines(run)}
    assert {flow: line["verdict"] for flow, line in verdicts.items()} == {
        "notes-list": "pass",
        "notes-add": "pass",
        "notes-add-then-list": "pass",
        "notes-delete": "fail",
        "calendar-day": "pass",
        "calendar-book": "fail",
        "calendar-follow-up": "pass",
        "help-out-of-scope": "pass",
        "help-capabilities": "uncertain",
    }
    deleted, booked = verdicts["notes-delete"], verdicts["calendar-book"]
    assert (deleted["decided_by"], deleted["owner"]) == ("judge", "agent_execution")
    assert deleted["reproduction"] == ["Delete my note about the dentist."]
    assert (booked["decided_by"], booked["check"]) == ("check", "tool_call_rejected_by_schema")
    assert verdicts["help-capabilities"]["reason"] == "judge_invalid"
    conversations = [
        json.loads(line) for line in (run / "conversations.jsonl").read_text().splitlines()
    ]
    follow_up = next(c for c in conversations if c["flow_id"] == "calendar-follow-up")
    assert [t["tool_calls"][0]["arguments"] for t in follow_up["turns"]] == [
        {"day": "2026-03-02"},
        {"day": "2026-03-03"},
    ]
    assert "Dentist" in follow_up["turns"][0]["tool_calls"][0]["result"]
    isolated = {c["flow_id"] for c in conversations if c["isolated"]}
    assert isolated == {"notes-add", "notes-add-then-list", "notes-delete", "calendar-book"}


def test_the_run_has_a_ledger_of_its_failures_and_a_coverage_manifest(demo_run: DemoRun) -> None:
    ledger = (demo_run.path / "ledger.md").read_text(encoding="utf-8")
    assert "9 flows: 6 pass · 2 fail · 1 uncertain." in ledger
    assert (
        "| notes | agent_execution | acted_without_lookup | 1 | "
        "[notes-delete](report.html#flow-notes-delete)"
    ) in ledger
    assert "| calendar | model | tool_call_rejected_by_schema | 1 |" in ledger
    assert "| help-capabilities | help | judge_invalid |" in ledger
    coverage = json.loads((demo_run.path / "coverage.json").read_text(encoding="utf-8"))
    assert {
        family["family"]: (family["seeds"], family["judged"], family["pending"])
        for family in coverage["families"]
    } == {"notes": (4, 4, 0), "calendar": (3, 3, 0), "help": (2, 1, 1)}
    result = CliRunner().invoke(
        app, ["simulate", "coverage", str(DEMO / "flows.yaml"), "--runs", str(demo_run.path)]
    )
    assert result.exit_code == 0, result.output
    assert "help" in result.output and "88.9" in result.output


def test_the_runs_page_opens_in_chromium_and_filters_its_conversations(
    demo_run: DemoRun, chromium: Any
) -> None:
    problems: list[str] = []
    page = open_page(chromium, demo_run.path / "report.html", problems, "#flow-notes-delete")
    assert len(visible(page)) == 9
    page.select_option("#filter-verdict", "fail")
    assert sorted(visible(page)) == ["flow-calendar-book", "flow-notes-delete"]
    page.select_option("#filter-verdict", "")
    page.select_option("#filter-family", "help")
    assert sorted(visible(page)) == ["flow-help-capabilities", "flow-help-out-of-scope"]
    assert "Dentist" in page.inner_text("#flow-calendar-follow-up")
    page.close()
    assert problems == []
