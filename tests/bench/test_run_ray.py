"""``abt bench run --executor ray`` on a real local cluster (a head and two one-CPU worker nodes):
τ-bench airline episodes played on the driver, every agent call made by a Ray worker, and the
same episodes, state hashes and rewards as the local executor; a simulated user's calls made
there too; and every worker lost stopping the run, to be finished by a resume.

Each node's processes hold their own key (as each machine of a cluster runs ``ray start`` with
its own environment) and this process another, so the server's log of keys says which
process made each call.
"""

from __future__ import annotations

import json
import os
import signal
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.bench.models import Case, Gold
from agent_backtest.bench.tau_airline import benchmark_directory
from agent_backtest.bench.users import DEFAULT_STOP, ScriptedUser
from tests.bench.conftest import abt, lines, scripted, write_benchmark
from tests.fake_openai import FakeOpenAI
from tests.ray_cluster import NODE_KEY_ENV as KEY_ENV
from tests.ray_cluster import NODE_KEYS

pytestmark = pytest.mark.long

DRIVER_KEY = "sk-test-DRIVER0123456789"
CASES = ("0", "1", "2")


@pytest.fixture(autouse=True)
def driver_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, DRIVER_KEY)


def gold_agent() -> Any:
    """A scripted agent that makes each case's gold actions in order, then says its outputs;
    it knows the case by the scripted user's first message."""
    directory = benchmark_directory()
    golds = {
        gold.case_id: gold
        for gold in map(Gold.model_validate_json, (directory / "gold.jsonl").open())
    }
    by_opening = {}
    for line in (directory / "cases.jsonl").open():
        case = Case.model_validate_json(line)
        if case.id in CASES:
            by_opening[ScriptedUser.of(case, DEFAULT_STOP).turns[0]] = golds[case.id]

    def reply(body: dict[str, Any]) -> str | dict[str, Any]:
        messages = body["messages"]
        opening = next(m["content"] for m in messages if m["role"] == "user")
        gold = by_opening[opening]
        done = sum(m["role"] == "tool" for m in messages)
        if done == len(gold.actions):
            return "All done. " + " ".join(gold.outputs)
        action = gold.actions[done]
        function = {"name": action.name, "arguments": json.dumps(action.arguments)}
        call = {"id": f"call-{done}", "type": "function", "function": function}
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    return reply


def bench(config: Path, out: Path, *extra: object) -> tuple[int, str]:
    case_ids = [arg for case in CASES for arg in ("--case-id", case)]
    return abt(
        "bench", "run", "tau_airline", "--agent", "fake/agent-1", "--user", "scripted",
        "--out", out, "--config", config, "--no-cache", "--max-retries", "0",
        "--rollouts", "2", "--concurrency", "4", *case_ids, *extra,
    )  # fmt: skip


def keyed_config(path: Path, base_url: str) -> Path:
    """An abt.toml whose provider fake at ``base_url`` takes its key from KEY_ENV."""
    path.write_text(
        f'[providers.fake]\ntype = "openai"\nbase_url = "{base_url}"\napi_key_env = "{KEY_ENV}"\n',
        encoding="utf-8",
    )
    return path


def episodes(out: Path) -> list[tuple[Any, ...]]:
    """What each episode did and where it left the environment, with its grades' components
    and its reward."""
    grades = {grade["episode_id"]: grade for grade in lines(out / "grades.jsonl")}
    fields = ("case_id", "rollout", "seed", "ended_by", "error", "steps", "tool_calls")
    return sorted(
        (
            *(e[name] for name in fields),
            e["model_calls"],
            e["state_hash"],
            grades[e["episode_id"]]["components"],
            grades[e["episode_id"]]["reward"],
        )
        for e in lines(out / "episodes.jsonl")
    )


def test_bench_rollouts_on_ray_match_the_local_executor(ray_cluster: Any, tmp_path: Path) -> None:
    with FakeOpenAI(reply=gold_agent()) as server:
        config = keyed_config(tmp_path / "abt.toml", server.base_url)
        code, output = bench(config, tmp_path / "local")
        assert code == 0, output
        local_keys = [h["authorization"] for h in server.headers]
        server.headers.clear()
        code, output = bench(
            config, tmp_path / "ray", "--executor", "ray", "--ray-address", ray_cluster.address
        )
        assert code == 0, output
        ray_keys = [h["authorization"] for h in server.headers]
    local, on_ray = episodes(tmp_path / "local"), episodes(tmp_path / "ray")
    assert on_ray == local
    assert len(local) == 6 and all(row[-2]["final_state"] == 1.0 for row in local), local
    assert all(row[3] == "stop_marker" and row[5] > 0 for row in local), local
    calls = sum(row[7] for row in local)
    # The local run's calls came from this process; every call of the Ray run from a worker,
    # and both nodes' workers answered.
    assert local_keys == [f"Bearer {DRIVER_KEY}"] * calls
    assert len(ray_keys) == calls and set(ray_keys) == {f"Bearer {key}" for key in NODE_KEYS}
    manifest = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert manifest["status"] == "completed" and manifest["counts"]["agent"]["calls"] == calls
    # the Ray run records the ray it ran on; the local one, which never used it, does not
    (start,) = manifest["provenance"]
    assert start["packages"]["ray"] == version("ray")
    local_manifest = json.loads((tmp_path / "local" / "run.json").read_text())
    assert "ray" not in local_manifest["provenance"][0]["packages"]


def test_a_ray_address_without_executor_ray_is_refused(tmp_path: Path) -> None:
    code, output = abt(
        "bench", "run", "tau_airline", "--agent", "fake/agent-1", "--user", "scripted",
        "--out", tmp_path / "run", "--ray-address", "auto",
    )  # fmt: skip
    assert code == 2 and "--executor ray" in output
    assert not (tmp_path / "run").exists()


def test_a_simulated_users_calls_are_made_on_ray_too(ray_cluster: Any, tmp_path: Path) -> None:
    benchmark = write_benchmark(tmp_path / "shop")
    runs = {}
    with FakeOpenAI(reply=scripted) as server:
        config = keyed_config(tmp_path / "abt.toml", server.base_url)
        for name, extra in {"local": (), "ray": ("--executor", "ray")}.items():
            server.headers.clear()
            code, output = abt(
                "bench", "run", benchmark, "--agent", "fake/agent-1", "--user", "fake/user-1",
                "--out", tmp_path / name, "--config", config, "--no-cache", "--rollouts", "2",
                "--concurrency", "4", *extra,
                *(("--ray-address", ray_cluster.address) if extra else ()),
            )  # fmt: skip
            assert code == 0, output
            runs[name] = [h["authorization"] for h in server.headers]
    local, on_ray = episodes(tmp_path / "local"), episodes(tmp_path / "ray")
    assert on_ray == local and len(local) == 6
    assert all(row[3] == "stop_marker" and row[-1] == 1.0 for row in local), local
    # 3 agent calls and 2 user calls per episode, all from the workers on Ray
    counts = json.loads((tmp_path / "ray" / "run.json").read_text())["counts"]
    assert counts["agent"]["calls"] == 18 and counts["user"]["calls"] == 12
    assert runs["local"] == [f"Bearer {DRIVER_KEY}"] * 30
    assert len(runs["ray"]) == 30 and set(runs["ray"]) <= {f"Bearer {key}" for key in NODE_KEYS}


def test_every_worker_lost_stops_the_run_to_be_resumed(ray_cluster: Any, tmp_path: Path) -> None:
    killed: list[int] = []
    # an earlier run's workers may still be on their way out: only this run's are killed
    earlier = set(_descendants_named("ray::ReplayWorker"))

    def kill_the_workers(body: dict[str, Any]) -> str | dict[str, Any]:
        if not killed and len(server.bodies) >= 4:  # a few episodes under way
            killed.extend(set(_descendants_named("ray::ReplayWorker")) - earlier)
            for pid in killed:
                os.kill(pid, signal.SIGKILL)
        return scripted(body)

    benchmark = write_benchmark(tmp_path / "shop")
    out = tmp_path / "run"
    with FakeOpenAI(reply=kill_the_workers) as server:
        config = keyed_config(tmp_path / "abt.toml", server.base_url)
        code, output = abt(
            "bench", "run", benchmark, "--agent", "fake/agent-1", "--user", "scripted",
            "--out", out, "--config", config, "--no-cache", "--rollouts", "2",
            "--concurrency", "2", "--executor", "ray", "--ray-address", ray_cluster.address,
        )  # fmt: skip
        assert len(killed) == 2, killed
        # one line, last (the server's and Ray's own noise about the killed calls come first)
        said = output.rstrip().splitlines()[-1]
        assert code == 2 and "Ray workers were lost" in said and f"--resume {out}" in said, said
        assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
        assert not (out / "grades.jsonl").exists()
        first = {e["episode_id"] for e in lines(out / "episodes.jsonl")}
        assert len(first) < 6
        code, output = abt(
            "bench",
            "run",
            "--resume",
            out,
            "--executor",
            "ray",
            "--ray-address",
            ray_cluster.address,
        )
        assert code == 0, output
    ended = [e["episode_id"] for e in lines(out / "episodes.jsonl")]
    assert len(ended) == len(set(ended)) == 6 and first <= set(ended)
    assert all(e["error"] is None for e in lines(out / "episodes.jsonl"))
    assert json.loads((out / "run.json").read_text())["status"] == "completed"


def _descendants_named(title: str) -> list[int]:
    """The pids of this process's descendants whose command line starts with ``title`` (the
    cluster's Ray workers, never another process's)."""
    parents: dict[int, int] = {}
    titles: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            titles[int(entry.name)] = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    me = os.getpid()

    def descends(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == me:
                return True
        return False

    return [pid for pid, text in titles.items() if text.startswith(title) and descends(pid)]
