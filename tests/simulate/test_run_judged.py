"""``abt simulate run`` judges what it played, under the same lock, unless ``--skip-judge``; the
judge is checked before the first turn is sent, and a resumed run judges only what has no
verdict."""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI
from tests.processes import wait_for_lines
from tests.simulate.agent_server import AgentServer, read_log
from tests.simulate.conftest import abt, flows_file, scripted, target_file
from tests.simulate.judge_runs import PASS, replies, verdict_lines, write_config
from tests.simulate.processes import simulate_process

FLOWS = [scripted("chat-1", "hello", family="chat"), scripted("chat-2", "hi", family="chat")]


@pytest.fixture(autouse=True)
def no_stray_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


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
    # the judge's calls are the run's, over both starts (the resume asked none)
    counts = json.loads((tmp_path / "run" / "run.json").read_text())["counts"]
    assert counts["judge"]["calls"] == 2


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


def test_killed_while_playing_then_while_judging_resumes_to_one_of_each_per_flow(
    tmp_path: Path, notes_db: Path
) -> None:
    """SIGKILL during the conversations, then again during judging: ``--resume`` finishes both
    stages with one conversation and one verdict per flow, and plays no flow twice."""
    ids = [f"f{n}" for n in range(6)]
    flows = flows_file(tmp_path / "flows.jsonl", [scripted(i, f"one {i}") for i in ids])
    log, run = tmp_path / "agent.log", tmp_path / "run"
    with (
        AgentServer(log, notes_db, delay=0.3) as agent,
        FakeOpenAI(latency=0.4, reply=replies(PASS)) as judge,
    ):
        target = target_file(tmp_path / "t.toml", agent.base_url)
        config = write_config(tmp_path, ("main", judge.base_url), concurrency=1)
        playing = simulate_process(flows, "--target", target, "--out", run, "--judge",
                                   "main/grader", "--config", config)  # fmt: skip
        wait_for_lines(run / "conversations.jsonl", 2, playing)
        playing.send_signal(signal.SIGKILL)
        playing.wait()
        played_first = {c["flow_id"] for c in lines(run / "conversations.jsonl")}
        assert 2 <= len(played_first) < len(ids) and not (run / "verdicts.jsonl").exists()
        judging = simulate_process("--resume", run)
        wait_for_lines(run / "verdicts.jsonl", 2, judging)
        judging.send_signal(signal.SIGKILL)
        judging.wait()
        assert 2 <= len(verdict_lines(run)) < len(ids)
        finishing = simulate_process("--resume", run)
        assert finishing.wait(timeout=120) == 0
    assert sorted(c["flow_id"] for c in lines(run / "conversations.jsonl")) == ids
    assert sorted(v["flow_id"] for v in verdict_lines(run)) == ids
    sent = Counter(entry["message"] for entry in read_log(log) if entry.get("message"))
    assert set(sent) == {f"one {i}" for i in ids}
    assert all(sent[f"one {i}"] == 1 for i in played_first)  # a finished flow is never replayed
    assert json.loads((run / "run.json").read_text())["status"] == "completed"
    assert json.loads((run / "judging.json").read_text())["status"] == "complete"


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]
