"""One record per (unit, repeat): one writer per run, duplicates read once, torn lines repaired."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_tau_units
from tests.fake_openai import FakeOpenAI
from tests.processes import wait_for_lines

ENV = {**os.environ, "OPENAI_API_KEY": "sk-test-SECRETSECRET0123456789"}


@pytest.fixture(scope="module")
def units(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tau_units(tmp_path_factory.mktemp("units") / "units.jsonl", limit=12)


def abt(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_backtest.cli", *map(str, args)],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )


def start(*args: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agent_backtest.cli", *map(str, args)],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def keys(run: Path) -> list[tuple[str, int]]:
    lines = (run / "results.jsonl").read_text().splitlines()
    return [(record["unit_id"], record["repeat"]) for record in map(json.loads, lines)]


def slow_replay(units: Path, server: FakeOpenAI, out: Path, *extra: object) -> list[object]:
    return ["replay", units, "--model", "openai/m", "--base-url", server.base_url, "--out", out,
            "--no-cache", "--concurrency", "2", *extra]  # fmt: skip


def test_a_second_replay_into_a_running_run_is_refused(units: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    with FakeOpenAI() as server:
        server.hold(after=2)  # the first run waits on its third answer until the second is done
        first = start(*slow_replay(units, server, run))
        wait_for_lines(run / "results.jsonl", 2, first)
        second = abt(*slow_replay(units, server, run, "--overwrite"))
        assert first.poll() is None  # refused while the first was still writing
        server.release()
        assert first.wait(timeout=120) == 0, first.stderr.read() if first.stderr else ""
        paid = server.total
    assert second.returncode == 2 and "is being written by process" in second.stderr
    assert "Traceback" not in second.stderr
    assert sorted(keys(run)) == sorted(set(keys(run))) and len(keys(run)) == 12 == paid


def test_a_second_resume_while_one_runs_is_refused(units: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    with FakeOpenAI(latency=0.2) as server:
        first = start(*slow_replay(units, server, run))
        wait_for_lines(run / "results.jsonl", 2, first)
        first.send_signal(signal.SIGINT)
        assert first.wait(timeout=60) == 130
        server.hold(after=1)  # the resume waits on its second answer until the second is done
        resuming = start("replay", "--resume", run)
        wait_for_lines(run / "results.jsonl", len(keys(run)) + 1, resuming)
        second = abt("replay", "--resume", run)
        assert resuming.poll() is None  # refused while the resume was still writing
        server.release()
        assert resuming.wait(timeout=120) == 0
        paid = server.total
    assert second.returncode == 2 and "(resume)" in second.stderr
    assert "before you resume this run" in second.stderr
    assert len(keys(run)) == len(set(keys(run))) == 12 == paid


@pytest.fixture
def finished_run(units: Path, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    result = abt("replay", units, "--model", "mock/golden", "--out", run, "--no-cache")
    assert result.returncode == 0, result.stderr
    return run


def test_a_results_file_with_a_duplicate_scores_once(finished_run: Path) -> None:
    results = finished_run / "results.jsonl"
    lines = results.read_text().splitlines()
    first = json.loads(lines[0])
    changed = {**first, "attempts": 7}  # a second record of the pair, from a second writer
    results.write_text("\n".join([*lines, json.dumps(first), json.dumps(changed)]) + "\n")
    scored = abt("score", finished_run)
    assert scored.returncode == 0, scored.stderr
    assert "2 more records of a (unit, repeat) already recorded were left out" in scored.stderr
    scores = (finished_run / "scores.jsonl").read_text().splitlines()
    assert len(scores) == 12 == len({(s["unit_id"], s["repeat"]) for s in map(json.loads, scores)})
    summary = json.loads((finished_run / "summary.json").read_text())
    assert sum(summary["overall"]["buckets"].values()) == 12
    resumed = abt("replay", "--resume", finished_run, "--no-score")
    assert resumed.returncode == 0, resumed.stderr
    assert len(keys(finished_run)) == 12
    kept = json.loads(results.read_text().splitlines()[0])
    assert kept["attempts"] == first["attempts"]  # the first whole record is the one kept


def test_a_torn_middle_line_is_named_and_repaired_keeping_every_whole_record(
    finished_run: Path,
) -> None:
    results = finished_run / "results.jsonl"
    lines = results.read_text().splitlines()
    before = keys(finished_run)
    torn = lines[5][: len(lines[5]) // 2]
    results.write_text("\n".join([*lines[:5], torn, *lines[5:]]) + "\n")
    scored = abt("score", finished_run)
    assert scored.returncode == 2 and "Traceback" not in scored.stderr
    assert "results.jsonl: line 6:" in scored.stderr
    assert f"abt replay --resume {finished_run} --repair" in scored.stderr
    repaired = abt("replay", "--resume", finished_run, "--repair")
    assert repaired.returncode == 0, repaired.stderr
    assert keys(finished_run) == before
    assert abt("score", finished_run).returncode == 0


def test_repair_is_only_for_a_resume(units: Path, tmp_path: Path) -> None:
    result = abt("replay", units, "--model", "mock/golden", "--out", tmp_path / "r", "--repair")
    assert result.returncode == 2 and "--repair" in result.stderr
    assert "Traceback" not in result.stderr
