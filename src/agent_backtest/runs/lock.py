"""One writer per run directory: an advisory lock held while a process writes the run.

Replay, resume and scoring take it; a second process that tries to write the same run fails at
once with a message naming the process that holds it. The kernel drops the lock when its holder
exits, however it exits, so a killed run never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agent_backtest.errors import UserError

LOCK_FILE = ".lock"


@contextmanager
def run_lock(run: Path, action: str) -> Iterator[None]:
    """Hold the run directory's lock for the block; ``action`` says what this process does."""
    path = run / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            raise UserError(
                f"{run} is being written by {holder}; wait for it to finish (or stop it) "
                f"before you {action} this run"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()} ({action})".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
