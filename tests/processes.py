"""Waiting on a command the tests run as a separate process (the tests that stop or kill it)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

WAIT_SECONDS = 60
POLL_SECONDS = 0.01


def wait_for_lines(
    path: Path, count: int, process: subprocess.Popen[bytes] | subprocess.Popen[str]
) -> None:
    """Wait until ``path`` holds ``count`` lines while ``process`` runs; fail if it ends first,
    or after a minute."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"{path} never reached {count} lines")
