"""Where a command writes its records: a private file written atomically, or ``-`` for stdout."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from agent_backtest.runs import private_atomic_writer

STDOUT = Path("-")


@contextlib.contextmanager
def output_file(path: Path) -> Iterator[BinaryIO]:
    """``path`` through a 0600 temporary file renamed into place, or standard output for ``-``."""
    if path == STDOUT:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    with private_atomic_writer(path) as handle:
        yield handle
