"""Timing a command in a child process and reading that command's own peak RSS.

The peak must be read from a process forked by a small one: Linux keeps the resident-set
high-water mark across fork and exec, so a command started straight from a large benchmark
process would report the benchmark's memory as its own. A few lines of Python stand between.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Forks the command from this small interpreter, waits for it, writes its peak RSS (KiB).
_PROBE = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_measured(command: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    """(seconds, peak RSS in KiB) of ``command``; exits if the command fails."""
    with tempfile.TemporaryDirectory() as directory:
        report = Path(directory) / "maxrss"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, str(report), *command],
            env=env,
            stdout=subprocess.DEVNULL,
            check=False,
        )
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"failed: {' '.join(command)}")
        return elapsed, int(report.read_text())


if __name__ == "__main__":  # a self-check: a bare interpreter's peak is a few MB
    print(run_measured([sys.executable, "-c", "pass"], dict(os.environ)))
