"""The file ``abt collect`` appends to: one whole JSON line per request, mode 0600.

Lines are appended under one lock, each with a single ``write`` of the whole line, so two
requests never interleave and a stop between requests leaves only whole lines. A file whose last
line was torn (the process killed in the middle of a write) is cut back to its last whole line
before anything is appended, so the new lines do not glue onto the broken one.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import orjson

from agent_backtest.errors import UserError

PRIVATE_FILE = 0o600
TAIL_CHUNK = 1 << 16


class TraceFile:
    """An open trace file that whole lines are appended to, from any thread."""

    def __init__(self, path: Path, parameter: str = "out") -> None:
        try:
            self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE)
        except OSError as exc:
            raise UserError(
                f"cannot write {path} ({exc.strerror}): name a file in a folder you can write",
                parameter,
            ) from None
        os.fchmod(self.fd, PRIVATE_FILE)  # an existing file too: it will hold user utterances
        self.path = path
        self.lock = threading.Lock()
        self.torn_bytes = _cut_torn_tail(path, self.fd)
        """Bytes of a torn last line cut off when the file was opened."""

    def append(self, record: dict[str, Any]) -> None:
        """Append ``record`` as one JSON line."""
        line = orjson.dumps(record) + b"\n"
        with self.lock:
            view = memoryview(line)
            while view:
                written = os.write(self.fd, view)
                view = view[written:]

    def close(self) -> None:
        """Flush to disk and close."""
        with self.lock:
            os.fsync(self.fd)
            os.close(self.fd)


def _cut_torn_tail(path: Path, fd: int) -> int:
    """Truncate the file after its last newline; the number of bytes cut."""
    size = os.fstat(fd).st_size
    end = size
    with open(path, "rb") as handle:
        while end > 0:
            start = max(0, end - TAIL_CHUNK)
            handle.seek(start)
            chunk = handle.read(end - start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                end = start + newline + 1
                break
            end = start
    if end < size:
        os.ftruncate(fd, end)
    return size - end
