"""Start-up time of the ``abt`` command: each command line run N times as a fresh process.

Prints the minimum, median and maximum wall time of each, from process start to exit, and the
median CPU time. The minimum is the figure to compare: it is the run least disturbed by the rest
of the machine.

    python benchmarks/cli_startup.py [--runs 20] [-- ARGS ...]

With no ARGS it times ``abt --help``, ``abt --version`` and the help of every group and every
command the app has, found by walking its command tree (so a new command is timed too).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from child_process import installed_env, time_command


def command_lines() -> list[str]:
    """``--help``, ``--version``, then ``NAME --help`` for every group and command of the app,
    in the order ``--help`` lists them (groups before their commands)."""
    import typer
    from typer.core import TyperGroup

    from agent_backtest.cli.app import app

    lines = ["--help", "--version"]

    def walk(group: TyperGroup, words: list[str]) -> None:
        context = typer.Context(group, info_name="abt")
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            lines.append(" ".join([*words, name, "--help"]))
            if isinstance(command, TyperGroup):
                walk(command, [*words, name])

    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    walk(root, [])
    return lines


def abt_command() -> list[str]:
    """The installed ``abt`` script next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).parent / "abt"
    return [str(script)] if script.exists() else [sys.executable, "-m", "agent_backtest.cli"]


def timing_environment() -> dict[str, str]:
    """This process's environment, as the timed commands run in it: 100 columns unless set, and
    compiled modules reused (:func:`child_process.installed_env`)."""
    return installed_env(**{"COLUMNS": os.environ.get("COLUMNS", "100")})


def time_once(command: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds from start to exit of one run; exits if the command fails."""
    return time_command(command, timing_environment())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("args", nargs="*", help="one command line, e.g. 'units --help'")
    options = parser.parse_args()
    lines = [" ".join(options.args)] if options.args else command_lines()
    base = abt_command()
    print(f"{options.runs} runs of each; wall seconds min / median / max, median CPU seconds")
    for line in lines:
        command = [*base, *line.split()]
        time_once(command)  # a first run fills the OS file cache and writes .pyc files
        runs = [time_once(command) for _ in range(options.runs)]
        walls = [wall for wall, _ in runs]
        cpu = statistics.median(cpu for _, cpu in runs)
        print(
            f"  abt {line:<26} {min(walls):.3f} / {statistics.median(walls):.3f} / "
            f"{max(walls):.3f}   CPU {cpu:.3f}"
        )


if __name__ == "__main__":
    main()
