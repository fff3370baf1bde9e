"""run.json's call count after a kill and a resume is what the server received: the calls in
flight at the kill and those since run.json was last saved included."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from agent_backtest.runs.call_log import CallLog, count_calls
from tests.conftest import write_tau_units
from tests.fake_openai import FakeOpenAI
from tests.processes import wait_for, wait_for_lines

UNITS = 24
CONCURRENCY = 4
ANSWERED_BEFORE_THE_KILL = 9


def replay_process(*args: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "agent_backtest.cli", "replay", *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "OPENAI_API_KEY": "sk-test"},
    )


def test_a_killed_run_resumed_counts_every_call_the_server_received(tmp_path: Path) -> None:
    units = write_tau_units(tmp_path / "units.jsonl", limit=UNITS)
    run = tmp_path / "run"
    with FakeOpenAI() as server:
        # Some calls answered, then every slot held at the server: the kill finds
        # CONCURRENCY calls in flight, received and unanswered.
        server.hold(after=ANSWERED_BEFORE_THE_KILL)
        process = replay_process(units, "--model", "openai/m", "--base-url", server.base_url,
                                 "--out", run, "--no-cache",
                                 "--concurrency", CONCURRENCY)  # fmt: skip
        wait_for(lambda: server.arrived == ANSWERED_BEFORE_THE_KILL + CONCURRENCY)
        wait_for_lines(run / "results.jsonl", ANSWERED_BEFORE_THE_KILL, process)
        process.send_signal(signal.SIGKILL)
        process.wait()
        server.release()
        resumed = replay_process("--resume", run)
        assert resumed.wait(timeout=120) == 0
        received = server.arrived
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["status"] == "completed"
    assert received == UNITS + CONCURRENCY  # the calls in flight at the kill were sent again
    assert manifest["counts"]["candidate"]["calls"] == received


def test_a_log_starts_with_the_calls_an_older_run_counted(tmp_path: Path) -> None:
    """A run begun before runs kept the log: its run.json's count is carried into it."""
    path = tmp_path / "calls.log"
    log = CallLog(path, "candidate", earlier=7)
    log.append()
    log.append(3)
    log.close()
    assert (log.count, count_calls(path, "candidate"), count_calls(path, "judge")) == (11, 11, 0)
    again = CallLog(path, "candidate", earlier=7)  # the log exists now: it alone counts
    again.close()
    assert again.count == 11
    assert oct(path.stat().st_mode & 0o777) == "0o600"
