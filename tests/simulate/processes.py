"""``abt simulate run`` as a separate process, for the tests that kill it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT


def simulate_process(*args: object) -> subprocess.Popen[bytes]:
    """``abt simulate run ARGS`` started in the background, its output discarded."""
    return subprocess.Popen(
        [sys.executable, "-m", "agent_backtest.cli", "simulate", "run", *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )


def wait_for_lines(path: Path, count: int, process: subprocess.Popen[bytes]) -> None:
    """Wait until ``path`` holds ``count`` lines (while ``process`` runs), else fail."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"{path} never reached {count} lines")
