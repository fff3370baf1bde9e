"""The command line: argument parsing and terminal output live only here."""

from __future__ import annotations

import signal
import sys
from types import FrameType


def main() -> None:
    """Entry point of the ``abt`` and ``agent-backtest`` console scripts.

    Ctrl-C (exit 130) and SIGTERM (exit 143) end the command with one line, never a traceback,
    from the first moment: while the command line itself is still being imported too.
    """
    from agent_backtest.errors import Terminated

    signal.signal(signal.SIGTERM, _terminate)
    try:
        from agent_backtest.cli.app import run

        run()
    except Terminated:
        print("abt: terminated", file=sys.stderr)
        sys.exit(143)
    except KeyboardInterrupt:
        print("abt: interrupted", file=sys.stderr)
        sys.exit(130)


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM: stop as Ctrl-C does, so what is running ends cleanly and says so."""
    from agent_backtest.errors import Terminated

    raise Terminated
