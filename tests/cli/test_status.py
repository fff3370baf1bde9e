"""A phase's status lines: a heartbeat where no bar is drawn, nothing more at a terminal."""

from __future__ import annotations

import io
import threading
import time

from rich.console import Console

from agent_backtest.cli.status import PhaseStatus


def piped() -> tuple[Console, io.StringIO]:
    """A console writing to a pipe-like stream (not a terminal), and what it wrote."""
    stream = io.StringIO()
    return Console(file=stream, force_terminal=False, width=200), stream


def test_in_a_pipe_the_start_line_comes_at_once_and_the_heartbeat_until_closed() -> None:
    console, stream = piped()
    done = threading.Event()
    beats = 0

    def progress() -> str:
        nonlocal beats
        beats += 1
        if beats == 3:
            done.set()
        return f"phase: {beats} so far"

    status = PhaseStatus(console, "phase: starting", progress, every=0.01)
    assert stream.getvalue() == "phase: starting\n"
    assert done.wait(10)
    status.close()
    written = stream.getvalue()
    status.close()  # closing twice is harmless, and nothing follows a close
    lines = written.splitlines()
    assert lines[0] == "phase: starting"
    assert lines[1].startswith("phase: 1 so far · ") and lines[1].endswith(" s")
    assert len(lines) == 1 + beats
    assert stream.getvalue() == written


def test_at_a_terminal_no_heartbeat_is_printed() -> None:
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=200)
    with PhaseStatus(console, "phase: starting", lambda: "phase: beat", every=0.01):
        time.sleep(0.2)  # twenty beats' time
    assert stream.getvalue() == "phase: starting\n"


def test_a_quiet_phase_that_ends_fast_prints_nothing() -> None:
    """With no start line, a mistake found at once stays the one line that reports it."""
    console, stream = piped()
    with PhaseStatus(console, None, lambda: "phase: still going"):
        pass
    assert stream.getvalue() == ""
