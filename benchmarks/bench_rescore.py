"""Time of ``abt bench rescore`` on the τ-bench sample, and of the airline environment's parts.

* ``abt bench rescore`` as a user runs it: a fresh process, wall time from start to exit, on
  ``examples/tau_airline/gpt-4o-airline-tasks-00-24.json`` (100 trajectories, 621 tool calls
  replayed, 100 gold replays), median of ``--rounds``;
* in one process: the first environment (the database parsed and its canonical bytes made),
  then per episode a reset, the state hash of an untouched database, and the state hash after a
  cancellation and a certificate (the two tables a tool writes), each the median of
  ``--repeats``;
* for comparison, what a fresh parse of the three JSON files costs, the copy a reset would make
  without the shared snapshot.

    python benchmarks/bench_rescore.py [--rounds 5] [--repeats 200]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import orjson

from agent_backtest.bench.models import Case
from agent_backtest.bench.tau_airline import AirlineEnvironment
from agent_backtest.bench.tau_airline.database import TABLES

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "tau_airline" / "gpt-4o-airline-tasks-00-24.json"
CASE = Case(id="0")


def command_seconds(rounds: int) -> list[float]:
    """Wall times of ``abt bench rescore`` on the sample, one fresh process each."""
    abt = Path(sys.executable).with_name("abt")
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run(
            [str(abt), "bench", "rescore", str(SAMPLE), "--env", "tau_airline"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        times.append(time.perf_counter() - start)
    return times


def median_ms(action: Callable[[], object], repeats: int) -> float:
    """The median time of ``action`` in milliseconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def changed(environment: AirlineEnvironment) -> AirlineEnvironment:
    environment.reset(CASE)
    environment.call("cancel_reservation", {"reservation_id": "AIXC49"})
    environment.call("send_certificate", {"user_id": "mia_li_3668", "amount": 100})
    return environment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()

    start = time.perf_counter()
    environment = AirlineEnvironment()
    first = time.perf_counter() - start
    folder = resources.files("agent_backtest.bench.tau_airline") / "data"
    raw = {name: (folder / f"{name}.json").read_bytes() for name in TABLES}
    parse = median_ms(lambda: {name: orjson.loads(data) for name, data in raw.items()}, 20)
    reset = median_ms(lambda: environment.reset(CASE), args.repeats)
    untouched = median_ms(environment.state_hash, args.repeats)
    after = changed(AirlineEnvironment())
    hashed = median_ms(after.state_hash, args.repeats // 4 or 1)
    times = command_seconds(args.rounds)

    print(f"first environment of a process (database parsed once): {first * 1000:.0f} ms")
    print(f"reset: {reset * 1000:.1f} µs; a fresh parse of the files instead: {parse:.0f} ms")
    print(f"state hash, untouched: {untouched:.1f} ms; after two writes: {hashed:.1f} ms")
    print(
        f"abt bench rescore, 100 trajectories: median {statistics.median(times):.2f} s "
        f"({min(times):.2f}–{max(times):.2f} s over {len(times)} runs)"
    )


if __name__ == "__main__":
    main()
