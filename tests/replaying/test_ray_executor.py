"""``--executor ray`` on a real local cluster (a head and two one-CPU worker nodes) against the
local test server: the local executor's results, resumable by either, a worker killed mid-run,
and the rate limit held across the cluster."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_backtest.api import CallOptions, ExecutorOptions, replay, resume
from agent_backtest.api.replays import RunEvents
from agent_backtest.cli.app import app
from agent_backtest.executors import ExecutorStatus
from agent_backtest.runs.run import Run
from tests.fake_openai import FakeOpenAI
from tests.ray_cluster import OPENAI_KEY

pytestmark = pytest.mark.long

KEY = OPENAI_KEY  # both worker nodes hold it
MODEL = "openai/candidate-1"
LAG = 2.0  # seconds between the rate limiter's grant and the server's arrival, at most


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def calls(server: FakeOpenAI, tmp_path: Path, **given: Any) -> CallOptions:
    settings: dict[str, Any] = {"cache": False, "max_retries": 2, "timeout": 10, "concurrency": 4}
    return CallOptions(base_url=server.base_url, cache_dir=tmp_path / "cache", **settings | given)


def on_ray(cluster: Any) -> ExecutorOptions:
    return ExecutorOptions(executor="ray", ray_address=cluster.address)


class Watch(RunEvents):
    """The executor's last status, and an optional action on each."""

    def __init__(self, action: Any = None) -> None:
        super().__init__()
        self.status: ExecutorStatus | None = None
        self.action = action
        self.on_progress = self.seen

    def seen(self, status: ExecutorStatus) -> None:
        self.status = status
        if self.action is not None:
            self.action(status)


def answers(run: Run) -> dict[tuple[str, int], dict[str, Any]]:
    """Each pair's record, less what differs between any two runs (times and attempts)."""
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for record in run.results():
        data = record.model_dump(mode="json", exclude={"latency_ms", "attempts", "cache_hit"})
        assert (record.unit_id, record.repeat) not in found, "a pair written twice"
        found[record.unit_id, record.repeat] = data
    return found


def scores(run: Run) -> dict[tuple[str, int], dict[str, Any]]:
    return {(s.unit_id, s.repeat): s.model_dump(mode="json") for s in run.scores()}


def test_ray_gives_the_local_executors_results(
    ray_cluster: Any, units_file: Path, tmp_path: Path
) -> None:
    with FakeOpenAI(latency=0.02) as server:
        local = replay(units_file, model=MODEL, out=tmp_path / "local", k=2,
                       calls=calls(server, tmp_path))  # fmt: skip
        sent_locally = server.total
        watch = Watch()
        ray_run = replay(units_file, model=MODEL, out=tmp_path / "ray", k=2,
                         calls=calls(server, tmp_path), execution=on_ray(ray_cluster),
                         hooks=watch)  # fmt: skip
    assert ray_run.status == local.status == "completed"
    assert len(answers(ray_run)) == 48 and answers(ray_run) == answers(local)
    assert scores(ray_run) == scores(local) and len(scores(local)) == 48
    assert server.total - sent_locally == 48  # every call made once, by the workers
    assert watch.status is not None and len(watch.status.answered) == 2  # both nodes answered
    assert sum(watch.status.answered.values()) == 48 and watch.status.in_flight == 0
    assert ray_run.manifest.candidate_counts.calls == local.manifest.candidate_counts.calls == 48


def test_a_local_run_is_finished_on_ray_from_the_drivers_cache(
    ray_cluster: Any, units_file: Path, tmp_path: Path
) -> None:
    with FakeOpenAI() as server:
        first = replay(units_file, model=MODEL, out=tmp_path / "run", score=False,
                       calls=calls(server, tmp_path, cache=True))  # fmt: skip
        whole = answers(first)
        results = first.path / "results.jsonl"
        results.write_text("".join(results.read_text().splitlines(keepends=True)[:10]))
        sent = server.total
        watch = Watch()
        finished = resume(first, execution=on_ray(ray_cluster), score=False,
                          hooks=watch)  # fmt: skip
        assert server.total == sent  # the 14 pairs left came from the cache
    assert finished.status == "completed"
    assert answers(finished) == whole
    assert sum(r.cache_hit for r in finished.results()) == 14
    assert watch.status is not None and not watch.status.answered  # no worker was asked


def test_a_worker_killed_mid_run_costs_only_its_calls_in_flight(
    ray_cluster: Any, units_file: Path, tmp_path: Path
) -> None:
    killed: list[str] = []

    def kill_one(status: ExecutorStatus) -> None:
        if not killed and sum(status.answered.values()) >= 6 and status.in_flight >= 3:
            victim = sorted(status.answered)[0]  # "ip:pid"; both have calls in flight now
            os.kill(int(victim.rsplit(":", 1)[1]), signal.SIGKILL)
            killed.append(victim)

    watch = Watch(kill_one)
    with FakeOpenAI(latency=0.5) as server:
        run = replay(units_file, model=MODEL, out=tmp_path / "run", k=2,
                     calls=calls(server, tmp_path), execution=on_ray(ray_cluster),
                     hooks=watch)  # fmt: skip
    status = watch.status
    assert killed and status is not None and status.lost == killed
    assert status.requeued >= 1
    assert run.status == "completed"
    records = answers(run)  # one per pair, or it raises
    assert len(records) == 48 and all(r["response"] for r in records.values())
    assert sum(status.answered.values()) == 48
    assert 48 <= server.total <= 48 + status.requeued  # only the lost calls were sent again


def test_the_rate_limit_holds_across_the_cluster(
    ray_cluster: Any, units_file: Path, tmp_path: Path
) -> None:
    rpm, k = 108, 5  # a burst of 108 at once, then one call every 60/108 s
    watch = Watch()
    with FakeOpenAI() as server:
        run = replay(units_file, model=MODEL, out=tmp_path / "run", k=k, score=False,
                     calls=calls(server, tmp_path, rpm=rpm, concurrency=8),
                     execution=on_ray(ray_cluster), hooks=watch)  # fmt: skip
        arrivals = sorted(t for times in server.arrivals.values() for t in times)
    assert run.status == "completed" and len(arrivals) == 24 * k
    assert watch.status is not None and len(watch.status.answered) == 2
    # A leaky bucket of rpm a minute: never more than the burst and what leaked since. A
    # request reaches the server some time after the limiter let it go (the first ones too),
    # so the server's clock is given LAG seconds of slack: one limiter per worker would let all
    # 120 through in the first second, past the bound by far.
    start = arrivals[0]
    for count, arrived in enumerate(arrivals, start=1):
        assert count <= rpm + (arrived - start + LAG) * rpm / 60 + 1, (count, arrived - start)
    assert arrivals[-1] - start >= (24 * k - rpm) * 60 / rpm - LAG


runner = CliRunner()


def abt(*args: object) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout + result.stderr


def test_abt_replay_executor_ray_on_a_cluster(
    ray_cluster: Any, units_file: Path, tmp_path: Path
) -> None:
    with FakeOpenAI() as server:
        code, output = abt(
            "replay", units_file, "--model", MODEL, "--base-url", server.base_url,
            "--out", tmp_path / "run", "--no-cache", "--executor", "ray",
            "--ray-address", ray_cluster.address,
        )  # fmt: skip
    assert code == 0, output
    assert len((tmp_path / "run" / "results.jsonl").read_text().splitlines()) == 24
    assert "status completed" in " ".join(output.split())  # however the terminal wrapped it


def test_a_ray_address_without_the_ray_executor_is_refused(
    units_file: Path, tmp_path: Path
) -> None:
    code, output = abt("replay", units_file, "--model", MODEL, "--out", tmp_path / "run",
                       "--ray-address", "auto")  # fmt: skip
    assert code == 2
    assert "--ray-address: names a Ray cluster: add --executor ray" in output
    assert not (tmp_path / "run").exists()


def test_the_ray_executor_without_ray_says_how_to_install_it(
    units_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    code, output = abt("replay", units_file, "--model", MODEL, "--out", tmp_path / "run",
                       "--executor", "ray")  # fmt: skip
    assert code == 2
    assert "--executor: needs Ray: pip install 'agent-backtest[ray]'" in output
    assert not (tmp_path / "run").exists() and "Traceback" not in output


def test_batches_and_the_ray_executor_together_are_refused(
    units_file: Path, tmp_path: Path
) -> None:
    pytest.importorskip("ray")  # without Ray, the missing extra is what is said first
    code, output = abt("replay", units_file, "--model", MODEL, "--out", tmp_path / "run",
                       "--batch", "--executor", "ray")  # fmt: skip
    assert code == 2
    assert "--executor: makes live calls on Ray workers" in output and "choose one" in output
    assert not (tmp_path / "run").exists()
