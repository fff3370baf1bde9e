"""Every reader against tens of thousands of mutated real fixtures, with time and memory bounds.

The mutations are those of the suite's fuzz test (``tests/formats/mutations.py``): truncation,
byte flips, type swaps, deep nesting, huge strings and numbers, other encodings, YAML aliases.
Each case is read as ``abt units`` reads it (sessions, then units), once with the format
detected and once forced to its fixture's format, in worker processes that are replaced after
any case that crashes, hangs past ``--timeout`` seconds or takes the worker's peak RSS past
``--memory-mb``. A sample of cases also runs as whole ``abt ingest`` processes, whose exit code
must be 0 or 2 and whose output holds no traceback.

    python benchmarks/fuzz_readers.py --cases 10000 --processes 200
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.formats.mutations import FIXTURE_FORMATS, fixture_bytes, mutate  # noqa: E402

NAMES = sorted(FIXTURE_FORMATS)

# A worker: reads "seed forced" lines, answers one JSON line per case.
WORKER = """
import json, sys, tempfile, time, traceback
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.formats.mutations import FIXTURE_FORMATS, fixture_bytes, mutate, read_everything
names = sorted(FIXTURE_FORMATS)
contents = fixture_bytes()
folder = Path(tempfile.mkdtemp(prefix="abt-fuzz-"))

def peak_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0

for line in sys.stdin:
    seed, forced = (int(x) for x in line.split())
    case = mutate(seed, names[seed % len(names)], contents)
    path = folder / f"case{case.suffix}"
    path.write_bytes(case.data)
    started = time.perf_counter()
    try:
        outcome = read_everything(path, case.format if forced else None)
        kind = "ok" if outcome == "ok" else "refused"
        detail = "" if kind == "ok" else outcome[:200]
        if "\\n" in outcome or len(outcome) > 1500:
            kind, detail = "long_message", outcome[:200]
    except BaseException as error:
        frame = traceback.extract_tb(error.__traceback__)[-1]
        kind = "traceback"
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        detail = f"{type(error).__name__} at {where}: {error}"[:300]
    seconds = time.perf_counter() - started
    print(json.dumps({"kind": kind, "detail": detail, "seconds": seconds, "peak_kb": peak_kb(),
                      "mutation": case.mutation}), flush=True)
"""


@dataclass
class Tally:
    """What the cases gave."""

    kinds: Counter[str] = field(default_factory=Counter)
    mutations: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    slowest: float = 0.0
    peak_kb: int = 0

    def add(self, kind: str, case: str, detail: str) -> None:
        """Count one case, keeping the first example of each bad kind."""
        self.kinds[kind] += 1
        if kind not in ("ok", "refused", "process_exit_0", "process_exit_2"):
            self.examples.setdefault(f"{kind}: {detail[:120]}", case)


class Worker:
    """One worker process and its bounds."""

    def __init__(self, memory_kb: int) -> None:
        self.memory_kb = memory_kb
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(ROOT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, seed: int, forced: bool, timeout: float) -> dict | None:
        """The case's answer, or None when it took longer than ``timeout`` (worker killed)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{seed} {int(forced)}\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else ""
        if not line:
            self.stop()
            return None
        return json.loads(line)

    def stop(self) -> None:
        """End the worker."""
        self.process.kill()
        self.process.wait()


def run_in_process(cases: int, timeout: float, memory_mb: int, tally: Tally) -> None:
    """``cases`` seeds, each read detected and forced, in replaceable workers."""
    worker = Worker(memory_mb * 1024)
    for seed in range(cases):
        for forced in (False, True):
            case = f"seed {seed} ({NAMES[seed % len(NAMES)]}, forced={forced})"
            answer = worker.run(seed, forced, timeout)
            if answer is None:
                tally.add("hang", case, f"over {timeout:g} s")
                worker = Worker(memory_mb * 1024)
                continue
            tally.mutations[answer["mutation"]] += 1
            tally.slowest = max(tally.slowest, answer["seconds"])
            tally.peak_kb = max(tally.peak_kb, answer["peak_kb"])
            kind = answer["kind"]
            if answer["peak_kb"] > memory_mb * 1024:
                kind = "memory"
            tally.add(kind, case, answer["detail"])
            if kind in ("traceback", "memory"):  # a fresh worker: a clean heap and peak
                worker.stop()
                worker = Worker(memory_mb * 1024)
    worker.stop()


def run_as_processes(count: int, first_seed: int, timeout: float, tally: Tally) -> None:
    """``count`` cases as whole ``abt ingest`` processes: exit 0 or 2, never a traceback."""
    contents = fixture_bytes()
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(first_seed, first_seed + count):
            case = mutate(seed, NAMES[seed % len(NAMES)], contents)
            path = Path(folder) / f"case{case.suffix}"
            path.write_bytes(case.data)
            try:
                result = subprocess.run(
                    [sys.executable, "-m", "agent_backtest.cli", "ingest", str(path)],
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                    env={**os.environ, "COLUMNS": "100"},
                )
            except subprocess.TimeoutExpired:
                tally.add("process_hang", f"seed {seed}", f"over {timeout:g} s")
                continue
            if "Traceback" in result.stderr:
                tally.add("process_traceback", f"seed {seed}", result.stderr.splitlines()[-1])
            elif result.returncode not in (0, 2):
                tally.add("process_exit", f"seed {seed}", f"exit {result.returncode}")
            else:
                tally.add(f"process_exit_{result.returncode}", f"seed {seed}", "")


def main() -> None:
    """Run the cases and print the tally."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000, help="seeds (each read twice)")
    parser.add_argument("--processes", type=int, default=200, help="cases run as abt processes")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds a case may take")
    parser.add_argument("--memory-mb", type=int, default=500, help="peak RSS a case may reach")
    args = parser.parse_args()
    tally, started = Tally(), time.perf_counter()
    run_in_process(args.cases, args.timeout, args.memory_mb, tally)
    process_tally = Tally()
    run_as_processes(args.processes, args.cases, args.timeout, process_tally)
    report = {
        "cases": args.cases,
        "reads": sum(tally.kinds.values()),
        "outcomes": dict(sorted(tally.kinds.items())),
        "mutations": dict(sorted(tally.mutations.items())),
        "slowest_read_seconds": round(tally.slowest, 2),
        "worker_peak_rss_mb": round(tally.peak_kb / 1024, 1),
        "processes": dict(sorted(process_tally.kinds.items())),
        "failures": {**tally.examples, **process_tally.examples},
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
