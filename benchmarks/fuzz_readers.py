"""Every reader against tens of thousands of mutated real files, with time and memory bounds.

The mutations are those of the suite's fuzz test (``tests/formats/mutations.py`` and
``tests/formats/file_kinds.py``): truncation, byte flips, type swaps, deep nesting, huge strings
and numbers, other encodings, YAML aliases, deep TOML, lone surrogates, control characters.
The seeds go round the trace fixtures and the other file kinds (settings, benchmark and run
files). A trace case is read as ``abt units`` reads it (sessions, then units), once with the
format detected and once forced to its fixture's format; a file case runs the command that reads
that kind of file. Cases run in worker processes that are replaced after any case that crashes,
hangs past ``--timeout`` seconds or takes the worker's peak RSS past ``--memory-mb``. A sample
of trace cases also runs as whole ``abt ingest`` processes, and every file kind, replaced by a
named pipe, a link to /dev/zero and a folder, as a whole ``abt`` process: the exit code must be
0 or 2 and the output hold no traceback.

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

from tests.formats.file_kinds import FILE_KINDS  # noqa: E402
from tests.formats.mutations import FIXTURE_FORMATS, fixture_bytes, mutate  # noqa: E402

NAMES = sorted(FIXTURE_FORMATS)
KINDS = [*NAMES, *sorted(FILE_KINDS)]
"""What seed ``s`` is a case of: ``KINDS[s % len(KINDS)]``, a trace fixture or a file kind."""

# A worker: reads "seed forced" lines, answers one JSON line per case.
WORKER = """
import json, os, shutil, sys, tempfile, time, traceback
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.formats.file_kinds import FILE_KINDS, mutate_file, read_case, workspace
from tests.formats.mutations import FIXTURE_FORMATS, fixture_bytes, mutate, read_everything
names = sorted(FIXTURE_FORMATS)
kinds = [*names, *sorted(FILE_KINDS)]
contents = fixture_bytes()
folder = Path(tempfile.mkdtemp(prefix="abt-fuzz-"))
os.environ["XDG_CACHE_HOME"] = str(folder / "cache")
os.environ["XDG_CONFIG_HOME"] = str(folder / "config")

def peak_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0

def read_trace(seed, forced):
    case = mutate(seed, kinds[seed % len(kinds)], contents)
    path = folder / f"case{case.suffix}"
    path.write_bytes(case.data)
    outcome = read_everything(path, case.format if forced else None)
    if "\\n" in outcome or len(outcome) > 1500:
        return "long_message", outcome[:200], case.mutation
    if outcome == "ok":
        return "ok", "", case.mutation
    return "refused", outcome[:200], case.mutation

def read_file(seed):
    ws = workspace(folder / "workspace")
    case = mutate_file(seed, kinds[seed % len(kinds)], ws)
    scratch = Path(tempfile.mkdtemp(dir=folder))
    try:
        outcome = read_case(case, ws, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    code = int(outcome.split(":", 1)[0].removeprefix("exit "))
    if not 0 <= code <= 3:
        return "bad_exit", outcome[:200], case.mutation
    if "more error lines" in outcome or len(outcome) > 1500:
        return "long_message", outcome[:200], case.mutation
    return ("ok" if code == 0 else "refused"), outcome[:200], case.mutation

for line in sys.stdin:
    seed, forced = (int(x) for x in line.split())
    started = time.perf_counter()
    mutation = "?"
    try:
        if kinds[seed % len(kinds)] in FIXTURE_FORMATS:
            kind, detail, mutation = read_trace(seed, forced)
        else:
            kind, detail, mutation = read_file(seed)
    except BaseException as error:
        frame = traceback.extract_tb(error.__traceback__)[-1]
        kind = "traceback"
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        detail = f"{type(error).__name__} at {where}: {error}"[:300]
    seconds = time.perf_counter() - started
    print(json.dumps({"kind": kind, "detail": detail, "seconds": seconds, "peak_kb": peak_kb(),
                      "mutation": mutation}), flush=True)
"""


@dataclass
class Tally:
    """What the cases gave."""

    kinds: Counter[str] = field(default_factory=Counter)
    mutations: Counter[str] = field(default_factory=Counter)
    kinds_read: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    slowest: float = 0.0
    peak_kb: int = 0

    def add(self, kind: str, case: str, detail: str) -> None:
        """Count one case, keeping the first example of each bad kind."""
        self.kinds[kind] += 1
        if kind not in ("ok", "refused", "process_exit_0", "process_exit_2", "special_exit_2"):
            self.examples.setdefault(f"{kind}: {detail[:120]}", case)


class Worker:
    """One worker process and its bounds."""

    def __init__(self, memory_kb: int, folder: str) -> None:
        self.memory_kb = memory_kb
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(ROOT)],
            env={**os.environ, "TMPDIR": folder},  # its files go where the run removes them
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


def run_in_process(cases: int, timeout: float, memory_mb: int, tally: Tally, folder: str) -> None:
    """``cases`` seeds in replaceable workers: a trace case read detected and forced, a file
    case once."""
    worker = Worker(memory_mb * 1024, folder)
    for seed in range(cases):
        kind = KINDS[seed % len(KINDS)]
        for forced in (False, True) if kind in FIXTURE_FORMATS else (False,):
            case = f"seed {seed} ({kind}, forced={forced})"
            answer = worker.run(seed, forced, timeout)
            if answer is None:
                tally.add("hang", case, f"over {timeout:g} s")
                worker = Worker(memory_mb * 1024, folder)
                continue
            tally.mutations[answer["mutation"]] += 1
            tally.kinds_read[kind if kind in FILE_KINDS else "traces"] += 1
            tally.slowest = max(tally.slowest, answer["seconds"])
            tally.peak_kb = max(tally.peak_kb, answer["peak_kb"])
            outcome = answer["kind"]
            if answer["peak_kb"] > memory_mb * 1024:
                outcome = "memory"
            tally.add(outcome, case, answer["detail"])
            if outcome in ("traceback", "memory"):  # a fresh worker: a clean heap and peak
                worker.stop()
                worker = Worker(memory_mb * 1024, folder)
    worker.stop()


def run_as_processes(count: int, first_seed: int, timeout: float, tally: Tally) -> None:
    """``count`` cases as whole ``abt ingest`` processes: exit 0 or 2, never a traceback."""
    contents = fixture_bytes()
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(first_seed, first_seed + count):
            case = mutate(seed, NAMES[seed % len(NAMES)], contents)  # traces only
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


def run_special_files(timeout: float, tally: Tally) -> None:
    """Every file kind replaced by a named pipe, a link to /dev/zero and a folder, each read by
    a whole ``abt`` process: exit 2 in one line, never a hang or a traceback."""
    from tests.formats.file_kinds import place, replace_by, workspace

    with tempfile.TemporaryDirectory() as folder:
        env = {
            **os.environ,
            "COLUMNS": "200",
            "XDG_CACHE_HOME": f"{folder}/cache",
            "XDG_CONFIG_HOME": f"{folder}/config",
        }
        ws = workspace(Path(folder) / "workspace")
        for kind, file_kind in sorted(FILE_KINDS.items()):
            for what in ("fifo", "dev_zero", "folder"):
                scratch = Path(tempfile.mkdtemp(dir=folder))
                path = place(file_kind.seed(ws), kind, ws, scratch)
                replace_by(path, what)
                argv = [str(arg) for arg in file_kind.command(path, ws, scratch)]
                case = f"{kind} as {what}"
                try:
                    result = subprocess.run(
                        [sys.executable, "-m", "agent_backtest.cli", *argv],
                        capture_output=True,
                        text=True,
                        timeout=timeout,
                        env=env,
                    )
                except subprocess.TimeoutExpired:
                    tally.add("special_hang", case, f"over {timeout:g} s")
                    continue
                if "Traceback" in result.stderr:
                    tally.add("special_traceback", case, result.stderr.splitlines()[-1])
                elif result.returncode != 2 or result.stderr.count("\n") != 1:
                    tally.add("special_not_one_line", case, result.stderr[-200:])
                else:
                    tally.add("special_exit_2", case, "")


def main() -> None:
    """Run the cases and print the tally."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000, help="seeds (a trace read twice)")
    parser.add_argument("--processes", type=int, default=200, help="cases run as abt processes")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds a case may take")
    parser.add_argument("--memory-mb", type=int, default=500, help="peak RSS a case may reach")
    args = parser.parse_args()
    tally, started = Tally(), time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="abt-fuzz-") as folder:
        run_in_process(args.cases, args.timeout, args.memory_mb, tally, folder)
    process_tally = Tally()
    run_as_processes(args.processes, args.cases, args.timeout, process_tally)
    run_special_files(args.timeout, process_tally)
    report = {
        "cases": args.cases,
        "reads": sum(tally.kinds.values()),
        "outcomes": dict(sorted(tally.kinds.items())),
        "mutations": dict(sorted(tally.mutations.items())),
        "reads_by_kind": dict(sorted(tally.kinds_read.items())),
        "slowest_read_seconds": round(tally.slowest, 2),
        "worker_peak_rss_mb": round(tally.peak_kb / 1024, 1),
        "processes": dict(sorted(process_tally.kinds.items())),
        "failures": {**tally.examples, **process_tally.examples},
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
