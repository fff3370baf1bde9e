"""The command line: argument parsing and terminal output live only here."""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType

INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a process Ctrl-C ended
TERMINATED = 143  # 128 + SIGTERM


def main() -> None:
    """Entry point of the ``abt`` and ``agent-backtest`` console scripts.

    Ctrl-C (exit 130) and SIGTERM (exit 143) end the command with one line, never a traceback,
    from the first moment: while the command line is still being loaded, the process just ends
    (nothing is written yet); once it runs, they are exceptions its commands clean up after.
    """
    signal.signal(signal.SIGINT, _end_while_loading)
    signal.signal(signal.SIGTERM, _end_while_loading)
    from agent_backtest.cli.app import run
    from agent_backtest.errors import Terminated

    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        run()
    except SystemExit as done:
        if done.code not in (0, None):
            raise
        # A stop's exception can be lost on the way (see Terminated; a Ctrl-C that lands in
        # an import's lock clean-up is dropped the same way): it is still a stop.
        _stopped_if_signalled()
        raise
    except Terminated:
        _stopped(TERMINATED)
    except KeyboardInterrupt:
        _stopped(INTERRUPTED)
    except Exception:
        # A stop raised inside a library can come back as the library's own error (pydantic
        # building a schema while a command's module loads wraps it in a SchemaError): the
        # signal was still a stop, not a crash.
        _stopped_if_signalled()
        raise


def _stopped(code: int) -> None:
    """End a stopped command with its one line and the shell's code for the signal."""
    print("abt: terminated" if code == TERMINATED else "abt: interrupted", file=sys.stderr)
    sys.exit(code)


def _stopped_if_signalled() -> None:
    """End as stopped if SIGTERM or Ctrl-C arrived, whatever came of its exception."""
    from agent_backtest.errors import TERMINATION

    if TERMINATION.is_set():
        _stopped(TERMINATED)
    if _INTERRUPTION.is_set():
        _stopped(INTERRUPTED)


def _end_while_loading(signum: int, frame: FrameType | None) -> None:
    """A stop before any command runs: say so and end at once."""
    os.write(2, b"abt: interrupted\n" if signum == signal.SIGINT else b"abt: terminated\n")
    os._exit(128 + signum)


_INTERRUPTION = threading.Event()
"""Set once Ctrl-C arrived, for a KeyboardInterrupt a library turned into its own error."""


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C: Python's own KeyboardInterrupt, remembered."""
    _INTERRUPTION.set()
    raise KeyboardInterrupt


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM: stop as Ctrl-C does, so what is running ends cleanly and says so."""
    from agent_backtest.errors import TERMINATION, Terminated

    TERMINATION.set()
    raise Terminated
