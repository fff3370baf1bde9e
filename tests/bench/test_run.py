"""``abt bench run`` end to end: a real shop environment, a scripted agent on 127.0.0.1."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from agent_backtest.bench.rollouts import prompt_group, rollout_seed
from tests.bench.conftest import abt, lines, scripted, write_config
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.fake_openai(reply=scripted)  # the shop's agent, user and judge


def run_args(benchmark: Path, config: Path, out: Path, *extra: object) -> list[object]:
    return [
        "bench", "run", benchmark, "--agent", "fake/agent-1", "--user", "scripted",
        "--out", out, "--config", config, "--no-cache", "--max-retries", "0", *extra,
    ]  # fmt: skip


def test_a_run_rolls_out_every_case_and_grades_every_episode(
    benchmark: Path, config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    out = tmp_path / "runs" / "one"
    code, output = abt(*run_args(benchmark, config, out, "--rollouts", "2", "--seed", "7"))
    assert code == 0, output
    episodes = lines(out / "episodes.jsonl")
    assert sorted((e["case_id"], e["rollout"]) for e in episodes) == [
        (f"c{i:02d}", r) for i in range(3) for r in range(2)
    ]
    for episode in episodes:
        assert episode["ended_by"] == "stop_marker" and episode["error"] is None
        assert episode["steps"] == 3 and episode["tool_calls"] == 2 and episode["model_calls"] == 3
        assert episode["seed"] == rollout_seed(7, episode["case_id"], episode["rollout"])
        assert episode["state_hash"].startswith("sha256:")
        assert (out / episode["trace"]).is_file()
    assert len({e["seed"] for e in episodes}) == 6
    assert len({e["prompt_group"] for e in episodes}) == 3
    grades = lines(out / "grades.jsonl")
    assert len(grades) == 6
    assert all(g["reward"] == 1.0 for g in grades), grades
    assert all(
        g["components"] == {"tool_calls": 1.0, "tests.bench.shop:ordered_grader": 1.0}
        for g in grades
    )
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["status"] == "completed" and manifest["episodes"] == 6
    assert manifest["gold"]["sha256"] and manifest["benchmark"]["sha256"]
    assert manifest["rollout"]["seed_derivation"].startswith("sha256(base:case_id:rollout)")
    assert manifest["scripted_user"] is True and set(manifest["roles"]) == {"agent"}
    assert "mean reward 1.000" in output and "pass^1 1.000" in output
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    for path in out.rglob("*"):
        expected = 0o700 if path.is_dir() else 0o600
        assert stat.S_IMODE(path.stat().st_mode) == expected, path
    # 3 agent calls per episode; the scripted user calls nothing
    assert fake_openai.total == 18 and manifest["counts"]["agent"]["calls"] == 18


def test_prompt_groups_and_seeds_follow_the_named_derivations() -> None:
    import hashlib

    digest = hashlib.sha256(b"7:c00:1").digest()
    assert rollout_seed(7, "c00", 1) == int.from_bytes(digest[:4], "big") >> 1 < 2**31
    group = prompt_group("c00", "rev", "fake/agent-1", 7, 2)
    assert group.startswith("pg-") and len(group) == 27
    assert group != prompt_group("c00", "rev", "fake/agent-1", 7, 3)


def test_concurrency_counts_episodes_in_flight(benchmark: Path, tmp_path: Path) -> None:
    import threading
    import time

    lock, state = threading.Lock(), {"now": 0, "most": 0}

    def slow(body: dict) -> str | dict:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.1)  # long enough for the other episodes' calls to arrive meanwhile
        with lock:
            state["now"] -= 1
        return scripted(body)

    with FakeOpenAI(reply=slow) as server:
        config = write_config(tmp_path / "abt.toml", fake=server.base_url)
        out = tmp_path / "run"
        code, output = abt(
            *run_args(benchmark, config, out, "--rollouts", "2", "--concurrency", "2")
        )
    assert code == 0, output
    assert state["most"] == 2  # two episodes at once, each one call at a time


def test_a_run_being_written_is_locked_against_a_resume(
    benchmark: Path, config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    from agent_backtest.runs.lock import run_lock

    out = tmp_path / "run"
    code, _ = abt(*run_args(benchmark, config, out))
    assert code == 0
    with run_lock(out, "bench run"):
        code, output = abt("bench", "run", "--resume", out)
    assert code == 2 and "is being written by process" in output
