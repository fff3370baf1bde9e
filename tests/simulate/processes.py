"""``abt simulate run`` as a separate process, for the tests that kill it."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def simulate_process(*args: object) -> subprocess.Popen[bytes]:
    """``abt simulate run ARGS`` started in the background, its output discarded."""
    return subprocess.Popen(
        [sys.executable, "-m", "agent_backtest.cli", "simulate", "run", *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
