"""Where a command writes its records: a private file written atomically, or ``-`` for stdout."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from agent_backtest.errors import UserError
from agent_backtest.runs.files import private_atomic_writer

STDOUT = Path("-")


@contextlib.contextmanager
def output_file(path: Path) -> Iterator[BinaryIO]:
    """``path`` through a 0600 temporary file renamed into place, or standard output for ``-``."""
    if path == STDOUT:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    if path.is_dir():
        raise UserError(f"{path} is a folder: name a file to write", "output")
    with contextlib.ExitStack() as stack:
        try:
            handle = stack.enter_context(private_atomic_writer(path))
        except OSError as exc:  # the folder cannot be made, or takes no new file
            raise UserError(
                f"cannot write {path} ({exc.strerror}): name a file in a folder you can write",
                "output",
            ) from None
        yield handle
