"""Timing a command in a child process, in wall and CPU seconds, and reading its own peak RSS.

The peak must be read from a process forked by a small one: Linux keeps the resident-set
high-water mark across fork and exec, so a command started straight from a large benchmark
process would report the benchmark's memory as its own. A few lines of Python stand between;
they also time the command from its fork to its exit, so their own start-up is not counted.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# Forks the command from this small interpreter, waits for it, writes its wall seconds (from
# fork to exit) and its peak RSS (KiB).
_PROBE = """
import os, sys, time
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
elapsed = time.perf_counter() - started
open(sys.argv[1], "w").write(f"{elapsed} {usage.ru_maxrss}")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def installed_env(**extra: str) -> dict[str, str]:
    """This process's environment as a timed command runs in it, with ``extra`` set: the
    package's compiled modules written once and then reused, as an installed package has them
    (pip compiles them at install). A shell with PYTHONDONTWRITEBYTECODE set would make every
    timed run compile the package from its source first, a cost no user pays."""
    env = {**os.environ, **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_measured(
    command: list[str],
    env: dict[str, str] | None = None,
    terminal: bool = False,
    quiet: bool = False,
) -> tuple[float, int]:
    """(seconds from start to exit, peak RSS in KiB) of ``command``; exits if it fails.

    With ``terminal``, its stdout and stderr are a pseudo-terminal (read and thrown away), so
    it draws what it draws for a person, such as a progress bar; with ``quiet``, its stderr is
    thrown away too.
    """
    with tempfile.TemporaryDirectory() as directory:
        report = Path(directory) / "figures"
        probe = [sys.executable, "-c", _PROBE, str(report), *command]
        if terminal:
            code = _run_on_terminal(probe, env)
        else:
            stderr = subprocess.DEVNULL if quiet else None
            code = subprocess.run(
                probe, env=env, stdout=subprocess.DEVNULL, stderr=stderr, check=False
            ).returncode
        if code != 0:
            raise SystemExit(f"failed: {' '.join(command)}")
        seconds, rss = report.read_text().split()
        return float(seconds), int(rss)


def time_command(
    command: list[str], env: dict[str, str] | None = None, quiet: bool = True
) -> tuple[float, float]:
    """(wall, CPU) seconds of ``command`` from start to exit; exits if it fails.

    The CPU seconds are its user and system time with those of the processes it waited for,
    which waiting for a core on a busy machine does not inflate. Its stdout is thrown away; its
    stderr too unless ``quiet`` is false.
    """
    started = time.perf_counter()
    stderr = subprocess.DEVNULL if quiet else None
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"failed ({process.returncode}): {' '.join(command)}")
    return elapsed, usage.ru_utime + usage.ru_stime


def _run_on_terminal(command: list[str], env: dict[str, str] | None) -> int:
    """Run ``command`` with a pseudo-terminal as stdout and stderr; its exit code."""
    controller, terminal = os.openpty()
    process = subprocess.Popen(command, env=env, stdout=terminal, stderr=terminal)
    os.close(terminal)

    def drain() -> None:
        try:
            while os.read(controller, 65536):
                pass
        except OSError:  # EIO: every writer has closed the terminal
            pass

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    code = process.wait()
    reader.join()
    os.close(controller)
    return code


if __name__ == "__main__":  # a self-check: a bare interpreter's peak is a few MB
    print(run_measured([sys.executable, "-c", "pass"], dict(os.environ)))
