"""Start-up time of the ``abt`` command: each command line run N times as a fresh process.

Prints the minimum, median and maximum wall time of each, from process start to exit, and the
median CPU time. The minimum is the figure to compare: it is the run least disturbed by the rest
of the machine.

    python benchmarks/cli_startup.py [--runs 20] [-- ARGS ...]

With no ARGS it times ``abt --help``, ``abt --version`` and the help of every command.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = [
    "--help",
    "--version",
    "units --help",
    "replay --help",
    "score --help",
    "report --help",
    "cache --help",
    "cache stats --help",
    "patch check --help",
]


def abt_command() -> list[str]:
    """The installed ``abt`` script next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).parent / "abt"
    return [str(script)] if script.exists() else [sys.executable, "-m", "agent_backtest.cli"]


def time_once(command: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds from start to exit of one run; exits if the command fails."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"failed ({process.returncode}): {' '.join(command)}")
    return elapsed, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("args", nargs="*", help="one command line, e.g. 'units --help'")
    options = parser.parse_args()
    lines = [" ".join(options.args)] if options.args else COMMANDS
    base = abt_command()
    os.environ.setdefault("COLUMNS", "100")
    print(f"{options.runs} runs of each; wall seconds min / median / max, median CPU seconds")
    for line in lines:
        command = [*base, *line.split()]
        time_once(command)  # a first run fills the OS file cache and writes .pyc files
        runs = [time_once(command) for _ in range(options.runs)]
        walls = [wall for wall, _ in runs]
        cpu = statistics.median(cpu for _, cpu in runs)
        print(
            f"  abt {line:<22} {min(walls):.3f} / {statistics.median(walls):.3f} / "
            f"{max(walls):.3f}   CPU {cpu:.3f}"
        )


if __name__ == "__main__":
    main()
