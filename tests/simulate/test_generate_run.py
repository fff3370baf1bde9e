"""``abt simulate run --generate``: the teacher's flows go into the run's flows.jsonl and are
played; the teacher is asked only after every check that costs nothing, and a teacher that
fails leaves no run directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_backtest.simulate.teacher_prompt import load_teacher_prompt
from tests.fake_openai import FakeOpenAI
from tests.simulate.agent_server import AgentServer, read_log
from tests.simulate.conftest import abt, agent_config, target_file
from tests.simulate.teacher import ScriptedTeacher, flows, teacher_config, write_inputs


@pytest.fixture(autouse=True)
def no_stray_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


def run_generated(tmp_path: Path, base_url: str, target: Path, *extra: object) -> tuple:
    caps, tools = write_inputs(tmp_path)
    config = teacher_config(tmp_path, base_url)
    read_only = agent_config(tmp_path / "agent.toml", ["list_notes"])
    return abt(
        "simulate", "run", "--generate", caps, "--per-family", 2, "--teacher", "main/teacher",
        "--tools", tools, "--target", target, "--out", "run", "--skip-judge", "--config", config,
        "--agent-config", read_only, *extra,
    )  # fmt: skip


def test_generated_flows_are_written_into_the_run_and_played(
    tmp_path: Path, agent: AgentServer
) -> None:
    teacher = ScriptedTeacher(lambda family, ask: flows(family, range(1, 3)))
    target = target_file(tmp_path / "t.toml", agent.base_url)
    with FakeOpenAI(reply=teacher) as server:
        code, output = run_generated(tmp_path, server.base_url, target)
        assert code == 0, output
        assert server.total == 2
    assert "4 of 4 conversations recorded" in output
    run = tmp_path / "run"
    played = [json.loads(line) for line in (run / "flows.jsonl").read_text().splitlines()]
    assert sorted(flow["id"] for flow in played) == ["chat-1", "chat-2", "notes-1", "notes-2"]
    assert {flow["teacher_prompt_sha256"] for flow in played} == {load_teacher_prompt().sha256}
    conversations = (run / "conversations.jsonl").read_text().splitlines()
    assert sorted(json.loads(c)["seed_id"] for c in conversations) == [
        "chat-seed-1", "chat-seed-1", "notes-seed-1", "notes-seed-1"
    ]  # fmt: skip
    said = [entry.get("message") for entry in read_log(agent.log)]
    assert "notes question 1" in said and "and the other one?" in said
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["roles"]["teacher"]["model"] == "main/teacher"
    assert manifest["flows"]["path"].endswith("capabilities.yaml")
    assert manifest["counts"]["teacher"]["calls"] == 2  # one ask per family


def test_a_teacher_that_fails_leaves_no_run_and_sends_no_turn(
    tmp_path: Path, agent: AgentServer
) -> None:
    teacher = ScriptedTeacher(lambda family, ask: flows(family, range(1, 2)))
    target = target_file(tmp_path / "t.toml", agent.base_url)
    with FakeOpenAI(reply=teacher) as server:
        code, output = run_generated(tmp_path, server.base_url, target)
    assert code == 1, output
    assert "notes is missing 1 of 2" in output and "chat is missing 1 of 2" in output
    assert not (tmp_path / "run").exists()
    # the agent was tried before the teacher was paid; no turn was sent
    assert read_log(agent.log) == [
        {"path": "/sessions", "session": "s-1"},
        {"path": "/sessions/s-1", "teardown": "s-1"},
    ]


def test_checks_that_cost_nothing_come_before_the_teacher(
    tmp_path: Path, agent: AgentServer
) -> None:
    teacher = ScriptedTeacher(lambda family, ask: flows(family, range(1, 3)))
    with FakeOpenAI(reply=teacher) as server:
        missing = tmp_path / "missing.toml"
        code, output = run_generated(tmp_path, server.base_url, missing)
        assert code == 2 and "missing.toml" in output, output
        (tmp_path / "run").mkdir()
        (tmp_path / "run" / "run.json").write_text("{}")
        target = target_file(tmp_path / "t.toml", agent.base_url)
        code, output = run_generated(tmp_path, server.base_url, target)
        assert code == 2 and "already holds a run" in output, output
        code, output = run_generated(tmp_path, server.base_url, target, "--teacher", "nowhere/x")
        assert code == 2 and "--teacher" in output, output
        assert server.total == 0
    assert read_log(agent.log) == []
    code, output = abt("simulate", "run", tmp_path / "flows.jsonl", "--generate", "c.yaml")
    assert code == 2 and "FLOWS: give FLOWS, --generate CAPABILITIES or --from RUN" in output, (
        output
    )
