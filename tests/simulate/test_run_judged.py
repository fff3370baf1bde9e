"""``abt simulate run`` judges what it played, under the same lock, unless ``--skip-judge``; the
judge is checked before the first turn is sent, and a resumed run judges only what has no
verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.fake_openai import FakeOpenAI
from tests.simulate.agent_server import AgentServer, read_log
from tests.simulate.conftest import flows_file, scripted, target_file
from tests.simulate.judge_runs import PASS, replies, verdict_lines, write_config

runner = CliRunner()
FLOWS = [scripted("chat-1", "hello", family="chat"), scripted("chat-2", "hi", family="chat")]


@pytest.fixture(autouse=True)
def no_stray_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


def abt(*args: object) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout + result.stderr


def test_every_played_conversation_is_judged_then_a_resume_asks_no_judge_again(
    tmp_path: Path, agent: AgentServer
) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", FLOWS)
    target = target_file(tmp_path / "t.toml", agent.base_url)
    with FakeOpenAI(reply=replies(PASS)) as judge:
        config = write_config(tmp_path, ("main", judge.base_url))
        code, output = abt(
            "simulate", "run", flows, "--target", target, "--out", "run",
            "--judge", "main/grader", "--config", config,
        )  # fmt: skip
        assert code == 0, output
        assert [v["flow_id"] for v in verdict_lines(tmp_path / "run")] == ["chat-1", "chat-2"]
        assert {v["verdict"] for v in verdict_lines(tmp_path / "run")} == {"pass"}
        asked = judge.total
        assert asked == 2
        code, output = abt("simulate", "run", "--resume", "run")
        assert code == 0, output
        assert judge.total == asked  # nothing new to judge: no judge asked again
    judging = json.loads((tmp_path / "run" / "judging.json").read_text())
    assert judging["status"] == "complete" and judging["judge"]["model"] == "main/grader"


def test_a_judge_that_cannot_be_reached_by_config_is_refused_before_any_turn(
    tmp_path: Path, agent: AgentServer
) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", FLOWS)
    target = target_file(tmp_path / "t.toml", agent.base_url)
    code, output = abt("simulate", "run", flows, "--target", target, "--out", "run")
    assert code == 2
    assert output.count("\n") == 1 and "no model for the judge role" in output
    assert read_log(agent.log) == [] and not (tmp_path / "run").exists()
    code, output = abt(
        "simulate", "run", flows, "--target", target, "--out", "run", "--judge", "nowhere/x"
    )
    assert code == 2 and output.count("\n") == 1 and "--judge" in output
    assert read_log(agent.log) == [] and not (tmp_path / "run").exists()
