"""Status lines for a phase that takes a while, readable in a pipe or a CI log too.

Rich's live progress bar draws only at a terminal: in a pipe it prints nothing until the phase
ends, so a phase of ten minutes looks hung. A phase says when it starts (always), and while it
goes, where no bar is drawn, a heartbeat prints how far it is every ``every`` seconds, whether
or not anything has ended since (one call to a slow model can take a minute).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Self

from rich.console import Console

EVERY_SECONDS = 10.0
"""How often a phase in a pipe says how far it is: often enough to show life in a CI log,
seldom enough that a long run's log stays readable."""


QUIET_SECONDS = 2.0
"""How long a phase with no start line may go before it says, where no terminal shows it, that it
is on: a fast phase (or a mistake found at once, which is one line) prints nothing more."""


class PhaseStatus:
    """One phase's status lines on ``console``: the ``start`` line (if any), then, when the
    console is not a terminal, ``progress()`` with the seconds elapsed every ``every`` seconds
    (the first after :data:`QUIET_SECONDS` when there is no start line) until the phase is
    closed. Use it as a context manager, or call :meth:`close`."""

    def __init__(
        self,
        console: Console,
        start: str | None,
        progress: Callable[[], str] | None = None,
        every: float = EVERY_SECONDS,
    ) -> None:
        self.console = console
        self.started_at = time.monotonic()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        if start is not None:
            console.print(start, markup=False)
        if progress is not None and not console.is_terminal:
            waits = (every if start is not None else QUIET_SECONDS, every)
            self._thread = threading.Thread(
                target=self._beat, args=(progress, *waits), name="abt-status", daemon=True
            )
            self._thread.start()

    def _beat(self, progress: Callable[[], str], first: float, every: float) -> None:
        wait = first
        while not self._stopped.wait(wait):
            wait = every
            elapsed = time.monotonic() - self.started_at
            self.console.print(f"{progress()} · {elapsed:.0f} s", markup=False)

    def close(self) -> None:
        """End the heartbeat (the phase is over); nothing more is printed for it."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class PhaseLines:
    """A job's status on the console while it goes, one phase at a time: a phase's heartbeat
    ends when the next phase starts, and when the job ends, however it ends (use it as a
    context manager around the job)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.status: PhaseStatus | None = None
        self.ended = 0

    def counted_phase(self, job: str, start: str, todo: int, ended: str) -> None:
        """A new phase over ``todo`` items that end one at a time: ``JOB: START`` said, and
        ``JOB: N/TODO ENDED`` the heartbeat's line, N counting the calls of :meth:`one_ended`."""
        self.ended = 0
        self.phase(f"{job}: {start}", lambda: f"{job}: {self.ended}/{todo} {ended}")

    def one_ended(self) -> None:
        """One more item of the counted phase has ended."""
        self.ended += 1

    def phase(self, start: str | None, progress: Callable[[], str]) -> None:
        """A new phase: ``start`` said (if any), ``progress()`` the heartbeat's line."""
        self.close()
        self.status = PhaseStatus(self.console, start, progress)

    def close(self) -> None:
        """End the heartbeat of the phase going on."""
        if self.status is not None:
            self.status.close()
            self.status = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
