"""A judged run keeps its response cache for the judge too: killed while it is being scored, and
resumed, it pays no judge call twice.

``abt replay --judge … --cache-dir C`` runs as a real process against a real candidate server
(answering in text, so production's text answers need the judge) and a real judge server on
127.0.0.1 that answers a few questions and then holds the rest. The process is killed (SIGKILL:
nothing is cleaned up) while those are held, and ``abt replay --resume`` finishes the scoring.
The judge server counts every question it answered.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from tests.conftest import TAU_TOOLS, TAU_TRAJECTORIES
from tests.fake_openai import FakeOpenAI
from tests.processes import wait_for
from tests.scoring.test_judge_outage import verdict

STEPS = 16
ANSWERED_BEFORE_KILL = 3


def write_config(path: Path, candidate: FakeOpenAI, judge: FakeOpenAI) -> Path:
    """abt.toml reaching ``candidate`` as served/agent and ``judge`` as grading/judge, one
    question at a time (so the judge's answers before the kill are a known number)."""
    path.write_text(
        f'[providers.served]\ntype = "openai"\napi_key_env = ""\nbase_url = "{candidate.base_url}"'
        f'\n\n[providers.grading]\ntype = "openai"\napi_key_env = ""\nbase_url = '
        f'"{judge.base_url}"\n\n[roles.judge]\nconcurrency = 1\nmax_retries = 0\n'
    )
    return path


def abt(*args: object) -> list[str]:
    return [sys.executable, "-m", "agent_backtest.cli", *map(str, args)]


def test_a_kill_while_scoring_then_resume_pays_no_judge_call_twice(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    with FakeOpenAI(ignores_tools=True) as candidate, FakeOpenAI(reply=verdict) as judge:
        config = write_config(tmp_path / "abt.toml", candidate, judge)
        judge.hold(after=ANSWERED_BEFORE_KILL)
        command = abt(
            "replay", TAU_TRAJECTORIES, "--tools", TAU_TOOLS, "--recorded-model",
            "gpt-4o", "--model", "served/agent", "--out", "run", "--config", config,
            "--cache-dir", cache, "--limit", STEPS, "--judge", "grading/judge",
        )  # fmt: skip
        process = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE)
        try:
            wait_for(
                lambda: judge.arrived > ANSWERED_BEFORE_KILL or process.poll() is not None, 120
            )
            time.sleep(1.0)  # the answers that arrived are stored (each as it arrives)
        finally:
            process.send_signal(signal.SIGKILL)
            _, stderr = process.communicate(timeout=60)
        assert process.returncode == -signal.SIGKILL, stderr
        paid_before = Counter(judge.requests)
        assert sum(paid_before.values()) == ANSWERED_BEFORE_KILL
        assert not (tmp_path / "run" / "scores.jsonl").exists()

        judge.release()
        resumed = subprocess.run(
            abt("replay", "--resume", "run"),
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr
        paid = Counter(judge.requests)
        sent = candidate.total

    assert sent == STEPS  # the resume sent no candidate call either
    assert max(paid.values()) == 1, paid  # no judge question paid twice
    assert set(paid_before) < set(paid)
    scores = (tmp_path / "run" / "scores.jsonl").read_text().splitlines()
    assert len(scores) == STEPS
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["config"]["roles"]["judge"]["cache_dir"] == str(cache)
