"""Mutation safety from what the agent called, not from what the flow said: a conversation
that calls a tool not declared read-only outside isolation is ``uncertain``
(``unisolated_mutation``) and the run exits 1 naming the flow and the tool, against the agent
server and the demo agent app; and a fixture database that mutating calls never change is
named as probably not the agent's."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.fake_openai import FakeOpenAI
from tests.optional import require
from tests.simulate.agent_server import AgentServer
from tests.simulate.conftest import abt, agent_config, flows_file, scripted, target_file
from tests.simulate.demo_app import call, demo_agent
from tests.simulate.judge_runs import PASS, replies, verdict_lines, write_config

DEMO = ROOT / "examples" / "demo_agent"


@pytest.fixture(autouse=True)
def no_stray_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


def notes(db: Path) -> list[int]:
    return [row[0] for row in sqlite3.connect(db).execute("SELECT id FROM notes ORDER BY id")]


def judged_run(
    tmp_path: Path, flows: list[dict[str, Any]], target: Path, *extra: object
) -> tuple[int, str, FakeOpenAI]:
    """``abt simulate run`` of ``flows`` through ``target``, judged by a judge that passes all."""
    with FakeOpenAI(reply=replies(PASS)) as judge:
        config = write_config(tmp_path, ("main", judge.base_url))
        code, output = abt(
            "simulate", "run", flows_file(tmp_path / "flows.jsonl", flows), "--target", target,
            "--out", "run", "--judge", "main/grader", "--config", config, *extra,
        )  # fmt: skip
    return code, output, judge


def test_a_delete_no_flow_named_is_uncertain_and_the_run_exits_1_naming_flow_and_tool(
    tmp_path: Path, agent: AgentServer, notes_db: Path
) -> None:
    flows = [scripted("forget", "delete note 1"), scripted("look", "list my notes")]
    read_only = agent_config(tmp_path / "agent.toml", ["list_notes"], ["add_note"])
    target = target_file(tmp_path / "t.toml", agent.base_url)
    code, output, judge = judged_run(
        tmp_path, flows, target, "--agent-config", read_only, "--read-only-only"
    )
    assert code == 1, output
    assert notes(notes_db) == [2]  # the agent did delete: nothing was isolated
    said = " ".join(output.split())
    assert (
        "forget (chat): 1 turns; called delete_note unisolated, not declared read-only: the "
        "agent's data may have changed" in said
    )
    assert "1 called a tool not declared read-only unisolated" in said
    assert "uncertain forget [unisolated_mutation] called delete_note without isolation" in said
    verdicts = {v["flow_id"]: v for v in verdict_lines(tmp_path / "run")}
    forget = verdicts["forget"]
    assert (forget["verdict"], forget["reason"], forget["check"]) == (
        "uncertain", "unisolated_mutation", "unisolated_mutation",
    )  # fmt: skip
    assert "delete_note" in forget["evidence"]
    assert verdicts["look"]["verdict"] == "pass"  # list_notes is declared read-only
    assert judge.total == 1  # the judge is never asked about the mutated one
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["status"] == "completed_with_errors"
    assert manifest["played"]["unisolated_mutations"] == 1
    conversations = [json.loads(line) for line in (tmp_path / "run" / "conversations.jsonl")
                     .read_text().splitlines()]  # fmt: skip
    assert {c["flow_id"]: c["unisolated_calls"] for c in conversations} == {
        "forget": ["delete_note"],
        "look": [],
    }


def test_a_fixture_db_that_mutating_calls_never_change_is_named(
    tmp_path: Path, agent: AgentServer, notes_db: Path
) -> None:
    elsewhere = tmp_path / "copy.db"  # not the file the agent writes
    shutil.copy(notes_db, elsewhere)
    flows = flows_file(tmp_path / "flows.jsonl", [scripted("add", "note: ring Bo", mutates=True)])
    declared = agent_config(tmp_path / "agent.toml", ["list_notes"], ["add_note"])
    target = target_file(tmp_path / "t.toml", agent.base_url)
    run = ["simulate", "run", flows, "--target", target, "--skip-judge", "--agent-config", declared]
    code, output = abt(*run, "--out", "wrong", "--fixture-db", elsewhere)
    assert code == 0, output
    warning = (
        f"1 isolated conversations (add) called mutating tools, yet {elsewhere} never changed: "
        "it may not be the agent's database, and restoring it protects nothing; name the file "
        "the agent writes with --fixture-db"
    )
    assert f"warning: {warning}\n" in output
    assert len(notes(notes_db)) == 3  # the agent's own database drifted
    assert json.loads((tmp_path / "wrong" / "run.json").read_text())["warnings"] == [warning]
    code, output = abt(*run, "--out", "right", "--fixture-db", notes_db)
    assert code == 0 and "warning" not in output, output
    assert json.loads((tmp_path / "right" / "run.json").read_text())["warnings"] == []


def demo_model(body: dict[str, Any]) -> str | dict[str, Any]:
    """The demo agent's model: a look-up, then a delete of the note it was asked about."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return f"Done: {last['content']}"
    if last["content"].startswith("Delete"):
        return call("delete_note", {"id": 1})
    return "I keep notes and a calendar."


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, FakeOpenAI]]:
    """The demo app on 127.0.0.1, its model scripted; a turn saying ``Crash`` finds the model
    answering 500 (the app's own error event)."""
    require("fastapi", "pip install 'agent-backtest[demo]'")
    require("uvicorn", "pip install 'agent-backtest[demo]'")
    db = tmp_path_factory.mktemp("demo") / "demo.db"
    with FakeOpenAI(reply=demo_model) as model, demo_agent(db, model.base_url) as url:
        model.faults["Crash while you answer."] = ["500"] * 20
        yield url, db, model


def demo_target(tmp_path: Path, url: str) -> Path:
    text = (DEMO / "target.toml").read_text(encoding="utf-8")
    path = tmp_path / "target.toml"
    path.write_text(text.replace("http://127.0.0.1:8011", url), encoding="utf-8")
    return path


def test_the_demo_agent_deleting_unisolated_is_unisolated_mutation_and_exit_1(
    tmp_path: Path, demo: tuple[str, Path, FakeOpenAI]
) -> None:
    url, db, _ = demo
    before = sqlite3.connect(db).execute("SELECT count(*) FROM notes").fetchone()[0]
    flows = [scripted("tidy", "Delete my note about the dentist.", family="notes")]
    code, output, _ = judged_run(
        tmp_path, flows, demo_target(tmp_path, url),
        "--agent-config", DEMO / "agent.toml", "--read-only-only",
    )  # fmt: skip
    assert code == 1, output
    assert "tidy (notes): 1 turns; called delete_note unisolated" in " ".join(output.split())
    [verdict] = verdict_lines(tmp_path / "run")
    assert (verdict["verdict"], verdict["reason"]) == ("uncertain", "unisolated_mutation")
    after = sqlite3.connect(db).execute("SELECT count(*) FROM notes").fetchone()[0]
    assert after == before - 1


def test_the_demo_agents_crash_is_agent_execution_with_its_message(
    tmp_path: Path, demo: tuple[str, Path, FakeOpenAI]
) -> None:
    url, _, _ = demo
    flows = [scripted("crash", "Crash while you answer.", family="help")]
    code, output, _ = judged_run(tmp_path, flows, demo_target(tmp_path, url))
    assert code == 0, output
    [verdict] = verdict_lines(tmp_path / "run")
    assert (verdict["verdict"], verdict["owner"], verdict["failure_category"]) == (
        "fail", "agent_execution", "agent_reported_error",
    )  # fmt: skip
    assert verdict["check"] == "agent_reported_error"
    assert verdict["evidence"].startswith(
        "turn 1: the agent reported: the model could not be reached"
    )
