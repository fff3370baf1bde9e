"""The calls a run has sent, one line each, appended as each request goes out.

run.json takes the live counts at most once a second (rewriting it with every call would cost
more than many calls do), so a run killed between two saves would say it sent fewer calls than
the server received: those since the save, and those in flight. This log is appended before
each request is sent, so it holds every call a server can have received, whenever the run was
killed; each start of the run takes its count from it.

A line is the name of the role that sent the call, written by one ``write`` to a file opened for
appending: a kill cannot tear it.
"""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_FILE = 0o600
READ_BLOCK = 1 << 20


class CallLog:
    """The log of one role's calls, open for appending; ``count`` is every call it holds."""

    def __init__(self, path: Path, role: str, earlier: int = 0) -> None:
        """Open the log at ``path`` for ``role``; a run that has none yet (one started before
        runs kept it) starts it with the ``earlier`` calls its run.json counted."""
        self._line = f"{role}\n".encode()
        fresh = not path.exists()
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
        if fresh and earlier:
            os.write(self._fd, self._line * earlier)
        self.count = count_calls(path, role)

    def append(self, calls: int = 1) -> None:
        """``calls`` more requests of the role are about to be sent (or were, elsewhere)."""
        os.write(self._fd, self._line * calls)
        self.count += calls

    def close(self) -> None:
        """Stop appending."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def count_calls(path: Path, role: str) -> int:
    """How many calls of ``role`` the log at ``path`` holds (0 when there is none)."""
    if not path.exists():
        return 0
    name = role.encode()
    count = 0
    rest = b""
    with path.open("rb") as handle:
        while block := handle.read(READ_BLOCK):
            lines = (rest + block).split(b"\n")
            rest = lines.pop()  # the block's last line, not ended yet
            count += lines.count(name)
    return count
