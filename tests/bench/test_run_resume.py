"""A bench run killed with SIGKILL, then resumed: one record per (case, rollout), none run twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.conftest import abt, lines, scripted, write_benchmark, write_config
from tests.fake_openai import FakeOpenAI
from tests.processes import wait_for_lines

pytestmark = pytest.mark.fake_openai(reply=scripted)  # the shop's agent, user and judge

ROOT = Path(__file__).resolve().parents[2]


def bench_process(*args: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "agent_backtest.cli", "bench", "run", *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,  # tests.bench.shop is importable from the repository's root
        # the checkout's code, and tests.bench.shop importable from the repository's root
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])},
    )


def test_sigkill_then_resume_runs_each_missing_episode_once(tmp_path: Path) -> None:
    benchmark = write_benchmark(tmp_path / "shop", cases=4)
    concurrency = 2
    with FakeOpenAI(reply=scripted, latency=0.05) as server:
        config = write_config(tmp_path / "abt.toml", fake=server.base_url)
        out = tmp_path / "run"
        process = bench_process(
            benchmark, "--agent", "fake/agent-1", "--user", "scripted", "--out", out,
            "--config", config, "--no-cache", "--rollouts", "3",
            "--concurrency", concurrency,
        )  # fmt: skip
        wait_for_lines(out / "episodes.jsonl", 3, process)
        process.send_signal(signal.SIGKILL)
        process.wait()
        before = (out / "episodes.jsonl").read_bytes()
        kept = [json.loads(line) for line in before.splitlines() if line.endswith(b"}")]
        assert 3 <= len(kept) < 12
        assert json.loads((out / "run.json").read_text())["status"] == "running"
        calls_before = server.total
        resumed = bench_process("--resume", out, "--config", config)
        assert resumed.wait(timeout=120) == 0
        calls_after_resume = server.total - calls_before

    episodes = lines(out / "episodes.jsonl")
    keys = [(e["case_id"], e["rollout"]) for e in episodes]
    assert sorted(keys) == [(f"c{i:02d}", r) for i in range(4) for r in range(3)]
    # the episodes recorded before the kill are kept as they were, and not run again
    assert episodes[: len(kept)] == kept
    assert calls_after_resume == 3 * (12 - len(kept))
    # every episode but those cut off by the kill was paid for once
    assert calls_before <= 3 * (len(kept) + concurrency)
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["status"] == "completed" and manifest["attempts_of_run"] == 2
    assert len(lines(out / "grades.jsonl")) == 12


def test_resume_of_a_finished_run_runs_nothing_and_grades_again(
    benchmark: Path, config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    args = ["--agent", "fake/agent-1", "--user", "scripted", "--config", config, "--no-cache"]
    code, output = abt("bench", "run", benchmark, "--out", out, *args)
    assert code == 0, output
    calls = fake_openai.total
    code, output = abt("bench", "run", "--resume", out, "--config", config)
    assert code == 0, output
    assert fake_openai.total == calls and "0 run now, 3 already done" in output
    code, output = abt("bench", "run", "--resume", out, benchmark)
    assert code == 2 and "--resume: takes the run's own benchmark" in output


def test_resume_refuses_a_benchmark_changed_since_the_run_started(
    benchmark: Path, config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    code, _ = abt(
        "bench", "run", benchmark, "--out", out, "--agent", "fake/agent-1", "--user", "scripted",
        "--config", config, "--no-cache",
    )  # fmt: skip
    assert code == 0
    with (benchmark / "cases.jsonl").open("a") as handle:
        handle.write('{"id": "c99", "instruction": "more"}\n')
    code, output = abt("bench", "run", "--resume", out)
    assert code == 2 and "changed since the run started" in output


def test_sigterm_marks_the_run_interrupted_and_a_resume_finishes_it(tmp_path: Path) -> None:
    benchmark = write_benchmark(tmp_path / "shop", cases=3)
    with FakeOpenAI(reply=scripted, latency=0.1) as server:
        config = write_config(tmp_path / "abt.toml", fake=server.base_url)
        out = tmp_path / "run"
        process = bench_process(
            benchmark, "--agent", "fake/agent-1", "--user", "scripted", "--out", out,
            "--config", config, "--no-cache",
        )  # fmt: skip
        wait_for_lines(out / "episodes.jsonl", 1, process)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 143
        assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
        assert not (out / "grades.jsonl").exists()
        assert bench_process("--resume", out).wait(timeout=120) == 0
    assert len(lines(out / "episodes.jsonl")) == 3
    assert json.loads((out / "run.json").read_text())["status"] == "completed"
