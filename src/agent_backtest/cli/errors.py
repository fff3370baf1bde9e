"""User errors as the command line shows them: one line naming the flag, exit code 2.

The library names the parameter at fault by its Python name; this table is the one place that
knows which flag sets it.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import typer

from agent_backtest.cli import INTERRUPTED, TERMINATED
from agent_backtest.cli.terminal import SafeConsole, one_line
from agent_backtest.errors import InputError, Terminated, UserError, bounded

USER_ERROR = 2

# Parameters whose flag is not simply ``--`` and the name with dashes.
FLAGS: dict[str, str] = {
    "inputs": "INPUT",
    "variants": "--variant",
    "config_file": "--config",
    "agent_config_file": "--agent-config",
    "patch_file": "--patch",
    "labels": "--label",
    "agent_versions": "--agent-version",
    "from_models": "--from-model",
    "nodes": "--node",
    "checks": "--check",
    "families": "--family",
    "flows": "FLOWS",
    "case_ids": "--case-id",
    "benchmark": "BENCHMARK",
    "from_run": "--from",
    "from_verdicts": "--verdict",
    "from_owners": "--owner",
    "corpus": "FLOWS",
}


def flag_of(parameter: str) -> str:
    """The flag (or argument) that sets a library parameter."""
    return FLAGS.get(parameter, "--" + parameter.replace("_", "-"))


def describe(error: UserError) -> str:
    """The one line the user sees."""
    if isinstance(error, InputError) or error.parameter is None:
        return str(error)
    return f"{flag_of(error.parameter)}: {error.message}"


MESSAGE_CHARS = 1000  # a value quoted in an error (an 8 M-character patch find) is cut


def report(message: str) -> None:
    """Print ``abt: error: message`` on stderr, on one line, cut to a readable length."""
    SafeConsole(stderr=True, highlight=False, soft_wrap=True).print(
        f"abt: error: {one_line(bounded(message, MESSAGE_CHARS))}", markup=False
    )


def report_stop(how: str) -> None:
    """Print ``abt: interrupted`` (or ``terminated``) on stderr."""
    print(f"abt: {how}", file=sys.stderr, flush=True)


def friendly_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a user mistake into one line on stderr and exit code 2, never a traceback."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except UserError as exc:
            report(describe(exc))
            raise typer.Exit(USER_ERROR) from None
        except Terminated:
            report_stop("terminated")
            raise typer.Exit(TERMINATED) from None
        except KeyboardInterrupt:
            report_stop("interrupted")
            raise typer.Exit(INTERRUPTED) from None

    return run
