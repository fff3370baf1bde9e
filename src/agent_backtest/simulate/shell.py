"""The user's shell commands that simulate runs (snapshot, restore, state checks): one way to run
them, with a deadline, and one way to say why one failed without leaking what it printed."""

from __future__ import annotations

import subprocess

from agent_backtest.redaction import redact


def run_shell(command: str, seconds: float) -> subprocess.CompletedProcess[str] | None:
    """``command`` run by the shell, its output captured as text; None when it did not finish
    within ``seconds`` (it is then killed)."""
    try:
        return subprocess.run(
            command, shell=True, capture_output=True, text=True, timeout=seconds, check=False
        )
    except subprocess.TimeoutExpired:
        return None


def failure(done: subprocess.CompletedProcess[str]) -> str:
    """``(exit 3): <the last line it wrote to stderr>``, credentials masked, the line cut at 200
    characters."""
    lines = done.stderr.strip().splitlines()
    said = redact(lines[-1])[:200] if lines else ""
    return f"(exit {done.returncode}){': ' + said if said else ''}"
