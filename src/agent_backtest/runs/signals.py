"""One policy for SIGINT and SIGTERM while a job runs, the same in replay, simulate and bench.

The first of either signal asks the job to stop: it takes no new work (no call, conversation or
episode is started), lets the work in flight finish and be recorded, and settles the run as
``interrupted``; a resume does the rest. A SIGTERM then ends the process (exit 143) once the run
is saved, a Ctrl-C ends the command (exit 130). A second signal of either kind does not wait for
the work in flight: the handlers the process had before take over again (the command line's raise
``KeyboardInterrupt`` and ``Terminated``), and the run is still settled as ``interrupted``.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator

from agent_backtest.errors import TERMINATION, Terminated

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest:
    """Whether the running job was asked to stop, and how."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        """Set by the first signal: take no new work."""
        self.terminated = False
        """The stop was a SIGTERM: the process ends once the run is saved."""

    def __bool__(self) -> bool:
        return self.asked.is_set()

    def ask(self, terminate: bool) -> None:
        """Stop taking work; with ``terminate``, end the process once the run is saved."""
        self.terminated = self.terminated or terminate
        self.asked.set()

    def end_if_asked(self) -> None:
        """Once the run is saved: end the command as the signal asked (Ctrl-C or SIGTERM)."""
        if self.terminated:
            raise Terminated
        if self.asked.is_set():
            raise KeyboardInterrupt


@contextlib.contextmanager
def stop_on_signals() -> Iterator[StopRequest]:
    """Handle SIGINT and SIGTERM by the policy above while the block runs in the running event
    loop; the process's own handlers are back when it ends."""
    loop = asyncio.get_running_loop()
    stop = StopRequest()
    before = {number: signal.getsignal(number) for number in SIGNALS}

    def restore() -> None:
        for number, handler in before.items():
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(number)
            if handler is not None:  # asyncio leaves the default handler behind
                with contextlib.suppress(ValueError):  # not the main thread: nothing was set
                    signal.signal(number, handler)

    def first(number: signal.Signals) -> None:
        stop.ask(terminate=number == signal.SIGTERM)
        restore()  # a second signal stops the work in flight too

    for number in SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(number, first, number)
    if TERMINATION.is_set():  # asked to stop before this loop could hear it
        stop.ask(terminate=True)
    try:
        yield stop
    finally:
        restore()
