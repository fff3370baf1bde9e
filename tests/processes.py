"""Waiting on a command the tests run as a separate process (the tests that stop or kill it)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def wait_for(condition: Callable[[], object], seconds: float = WAIT_SECONDS) -> None:
    """Wait until ``condition()`` holds (a server has seen some calls, a process has ended);
    fail after ``seconds``, a minute unless told."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(POLL_SECONDS)


# The command as the only child of a parent of its own: the parent's RUSAGE_CHILDREN peak is the
# command's, whatever else the test process ran before.
_PEAK_OF_CHILD = """
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print(json.dumps({"code": done.returncode, "err": done.stderr[-2000:], "peak_mib": peak}))
"""


def run_measured(command: list[object], **options: Any) -> dict[str, Any]:
    """Run ``command`` to its end; its exit ``code``, the end of its stderr (``err``) and its
    peak resident memory in MiB (``peak_mib``). ``options`` go to ``subprocess.run`` (env, cwd)."""
    measured = subprocess.run(
        [sys.executable, "-c", _PEAK_OF_CHILD, *map(str, command)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        **options,
    )
    return json.loads(measured.stdout)
