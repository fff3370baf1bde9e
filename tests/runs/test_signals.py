"""One signal policy for every job: the first SIGINT or SIGTERM stops new work, the work in
flight ends and is recorded, the run is saved ``interrupted``; the process then ends with 130
or 143. Each job is run as the ``abt`` process a user starts, against servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from agent_backtest.runs.signals import stop_on_signals
from tests.bench.conftest import scripted, write_benchmark, write_config
from tests.conftest import ROOT, write_tau_units
from tests.fake_openai import FakeOpenAI
from tests.processes import wait_for_lines
from tests.simulate.agent_server import AgentServer, create_notes_db, read_log
from tests.simulate.conftest import flows_file, target_file

EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}
SIGNALS = pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["int", "term"])


def abt_process(*args: object) -> subprocess.Popen[bytes]:
    """``abt ARGS`` as a process of the checkout's code, its output discarded."""
    pythonpath = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    return subprocess.Popen(
        [sys.executable, "-m", "agent_backtest.cli", *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,  # tests.bench.shop is importable from the repository's root
        env={**os.environ, "PYTHONPATH": pythonpath, "OPENAI_API_KEY": "sk-test"},
    )


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def status(run: Path) -> str:
    return str(json.loads((run / "run.json").read_text())["status"])


@SIGNALS
def test_a_replay_records_every_call_it_sent(sent: signal.Signals, tmp_path: Path) -> None:
    units = write_tau_units(tmp_path / "units.jsonl", limit=12)
    run = tmp_path / "run"
    with FakeOpenAI(latency=0.3) as server:
        process = abt_process(
            "replay", units, "--model", "openai/m", "--base-url", server.base_url,
            "--out", run, "--no-cache", "--concurrency", "2",
        )  # fmt: skip
        wait_for_lines(run / "results.jsonl", 2, process)
        process.send_signal(sent)
        assert process.wait(timeout=60) == EXIT[sent]
        asked = server.total
    assert status(run) == "interrupted"
    assert len(lines(run / "results.jsonl")) == asked < 12


@SIGNALS
def test_a_simulate_run_records_every_conversation_it_started(
    sent: signal.Signals, tmp_path: Path
) -> None:
    flows = [{"id": f"f{n}", "family": "chat", "turns": [{"user": "a"}, {"user": "b"}]}
             for n in range(10)]  # fmt: skip
    flows_path = flows_file(tmp_path / "flows.jsonl", flows)
    notes = create_notes_db(tmp_path / "notes.db", ["buy milk"])
    run, log = tmp_path / "run", tmp_path / "agent.log"
    with AgentServer(log, notes, delay=0.2) as agent:
        target = target_file(tmp_path / "t.toml", agent.base_url)
        process = abt_process(
            "simulate", "run", flows_path, "--target", target, "--out", run,
            "--skip-judge", "--concurrency", "2",
        )  # fmt: skip
        wait_for_lines(run / "conversations.jsonl", 2, process)
        process.send_signal(sent)
        assert process.wait(timeout=60) == EXIT[sent]
    sessions = [entry["session"] for entry in read_log(log) if "session" in entry]
    started = set(sessions[1:])  # the first is the pre-flight's, closed before any flow
    recorded = lines(run / "conversations.jsonl")
    assert status(run) == "interrupted"
    assert 2 <= len(recorded) == len(started) < 10


@SIGNALS
def test_a_bench_run_records_every_episode_it_started(sent: signal.Signals, tmp_path: Path) -> None:
    benchmark = write_benchmark(tmp_path / "shop", cases=4)
    run = tmp_path / "run"
    with FakeOpenAI(reply=scripted, latency=0.2) as server:
        config = write_config(tmp_path / "abt.toml", fake=server.base_url)
        process = abt_process(
            "bench", "run", benchmark, "--agent", "fake/agent-1", "--user", "scripted",
            "--out", run, "--config", config, "--no-cache",
        )  # fmt: skip
        wait_for_lines(run / "episodes.jsonl", 1, process)
        process.send_signal(sent)
        assert process.wait(timeout=60) == EXIT[sent]
        asked = server.total
    recorded = lines(run / "episodes.jsonl")
    assert status(run) == "interrupted" and not (run / "grades.jsonl").exists()
    # three agent calls an episode: no episode was cut, none started after the signal
    assert asked == 3 * len(recorded) and len(recorded) < 4


@pytest.mark.parametrize("first", [signal.SIGINT, signal.SIGTERM], ids=["int", "term"])
def test_a_second_signal_goes_to_the_handlers_the_process_had(first: signal.Signals) -> None:
    heard: list[int] = []

    def before(signum: int, frame: FrameType | None) -> None:
        heard.append(signum)

    saved = {number: signal.signal(number, before) for number in EXIT}

    async def job() -> tuple[bool, bool, list[int]]:
        with stop_on_signals() as stop:
            os.kill(os.getpid(), first)
            await asyncio.wait_for(stop.asked.wait(), 5)
            assert heard == []  # the first signal is the policy's
            os.kill(os.getpid(), signal.SIGTERM)  # the second is the process's own
            await asyncio.sleep(0.05)
            return bool(stop), stop.terminated, list(heard)

    try:
        asked, terminated, second = asyncio.run(job())
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)
    assert asked and terminated == (first == signal.SIGTERM)
    assert second == [signal.SIGTERM]
