"""Replay on the Ray executor against the local one: throughput at a fixed server latency, and
the driver's cost per call.

Both replay the same units through the library (``replay(..., score=False)``, no cache) against
the fake server in its own process, with the same ``--concurrency`` in total; the Ray run joins
a local cluster of ``--cpus`` CPUs started once here (one worker actor per CPU). Each run is
timed from the moment its calls can start (after the executor is ready: the workers' start-up
is reported on its own) to its last record, and the driver's CPU time over that span is divided
by the calls it made: for the local executor that includes the HTTP calls themselves, for Ray
only what the driver keeps (planning, cache look-ups, sending each job to a worker, writing
each record). A second pair of runs at zero latency gives the most calls a second the driver
can hand out.

    python benchmarks/ray_executor.py [--units 400] [--latency 0.2] [--concurrency 32]

Measured on the reference machine (2 cores shared with six other engineers' work, load
average 7 to 9), ``--units 400 --latency 0.2 --concurrency 32 --cpus 2 --rounds 3`` (τ-bench
units of 22 KB; medians of 3 rounds, each round's calls/s in brackets):

    local Ray cluster of 2 CPUs up in 31.6 s
    400 units, concurrency 32, latency 0.2 s: limit 160 calls/s
    server latency 0.2 s:
      local     51.6 calls/s (52, 44, 56) · driver CPU 5.69 ms a call · ready after 0.91 s
      ray       56.8 calls/s (57, 64, 46) · driver CPU 3.97 ms a call · ready after 10.59 s
    server latency 0 s:
      local     53.9 calls/s (55, 52, 54) · driver CPU 5.71 ms a call · ready after 0.76 s
      ray       43.0 calls/s (43, 43, 65) · driver CPU 3.96 ms a call · ready after 13.53 s

On one loaded 2-core machine neither executor reaches the 160 calls/s the latency allows: the
CPU is the limit, and Ray's workers compete with the driver and the server for it, so Ray gains
nothing here (it is for more machines, not for one). The driver's own cost per call on Ray,
about 4 ms of CPU for a 22 KB request (reading the unit, pickling the request to a worker,
writing its record), is the figure docs/scale.md sizes a large run from: one driver core hands
out at most about 250 calls a second.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from agent_backtest.api import CallOptions, ExecutorOptions, replay  # noqa: E402
from agent_backtest.api.replays import RunEvents  # noqa: E402
from replay_throughput import ENV, make_units, start_server, stop_server  # noqa: E402


@dataclass
class Timing:
    """One run: seconds from its calls' start to its last record, and driver CPU seconds."""

    seconds: float = 0.0
    cpu: float = 0.0
    ready: float = 0.0
    """Seconds from the call to the moment calls can start (the executor's start-up)."""


class Clock(RunEvents):
    """Times a run from its start (executor ready) to its finish."""

    def __init__(self) -> None:
        super().__init__()
        self.timing = Timing()
        self._called = time.perf_counter()
        self._wall = self._cpu = 0.0
        self.on_start = self.started
        self.on_finish = self.finished

    def started(self, todo: int, done: int) -> None:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        self.timing.ready = self._wall - self._called

    def finished(self, result: object) -> None:
        self.timing.seconds = time.perf_counter() - self._wall
        self.timing.cpu = time.process_time() - self._cpu


def one_run(units: Path, latency: float, out: Path, concurrency: int, executor: str) -> Timing:
    """Replay ``units`` on a fresh server with ``executor``; its timing."""
    server, url = start_server(latency)
    clock = Clock()
    try:
        replay(
            units,
            model="openai/bench",
            out=out,
            overwrite=True,
            score=False,
            calls=CallOptions(base_url=url, cache=False, concurrency=concurrency, timeout=60),
            execution=ExecutorOptions(executor=executor),  # type: ignore[arg-type]
            hooks=clock,
        )
    finally:
        busy = stop_server(server)
    count = sum(1 for _ in units.open())
    if busy["requests"] != count:
        raise SystemExit(f"{executor}: {busy['requests']} requests for {count} units")
    return clock.timing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--cpus", type=int, default=2, help="CPUs (so workers) of the cluster")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ.update(ENV)  # the workers inherit the key from the cluster started here
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    started = time.perf_counter()
    ray.init("local", num_cpus=args.cpus, include_dashboard=False, logging_level="ERROR")
    print(f"local Ray cluster of {args.cpus} CPUs up in {time.perf_counter() - started:.1f} s")
    work = Path(tempfile.mkdtemp(prefix="abt-ray-bench-"))
    units = make_units(work, args.units)
    limit = args.concurrency / args.latency
    print(
        f"{args.units} units, concurrency {args.concurrency}, latency {args.latency:g} s: "
        f"limit {limit:.0f} calls/s"
    )
    try:
        for latency in (args.latency, 0.0):
            compare(units, work, latency, args)
    finally:
        ray.shutdown()


def compare(units: Path, work: Path, latency: float, args: argparse.Namespace) -> None:
    """Print each round's local and Ray figures, then their medians."""
    found: dict[str, list[Timing]] = {"local": [], "ray": []}
    for _ in range(args.rounds):
        for executor in found:
            timing = one_run(units, latency, work / executor, args.concurrency, executor)
            found[executor].append(timing)
    print(f"server latency {latency:g} s:")
    for executor, timings in found.items():
        rate = statistics.median(args.units / t.seconds for t in timings)
        cpu = statistics.median(t.cpu / args.units * 1000 for t in timings)
        ready = statistics.median(t.ready for t in timings)
        rounds = ", ".join(f"{args.units / t.seconds:.0f}" for t in timings)
        print(
            f"  {executor:5}  {rate:7.1f} calls/s ({rounds}) · driver CPU {cpu:.2f} ms a call "
            f"· ready after {ready:.2f} s"
        )


if __name__ == "__main__":
    main()
