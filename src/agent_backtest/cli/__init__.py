"""The command line: argument parsing and terminal output live only here."""

from __future__ import annotations

import os
import signal
import sys
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
    from agent_backtest.errors import TERMINATION, Terminated

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        run()
    except SystemExit as done:
        if not TERMINATION.is_set() or done.code not in (0, None):
            raise
        # the stop's exception was lost on the way (see Terminated): it is still a stop
        print("abt: terminated", file=sys.stderr)
        sys.exit(TERMINATED)
    except Terminated:
        print("abt: terminated", file=sys.stderr)
        sys.exit(TERMINATED)
    except KeyboardInterrupt:
        print("abt: interrupted", file=sys.stderr)
        sys.exit(INTERRUPTED)


def _end_while_loading(signum: int, frame: FrameType | None) -> None:
    """A stop before any command runs: say so and end at once."""
    os.write(2, b"abt: interrupted\n" if signum == signal.SIGINT else b"abt: terminated\n")
    os._exit(128 + signum)


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM: stop as Ctrl-C does, so what is running ends cleanly and says so."""
    from agent_backtest.errors import TERMINATION, Terminated

    TERMINATION.set()
    raise Terminated
