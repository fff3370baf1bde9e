"""User errors as the command line shows them: one line naming the flag, exit code 2.

The library names the parameter at fault by its Python name; this table is the one place that
knows which flag sets it.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from typing import Any

import typer

from agent_backtest.cli import INTERRUPTED, TERMINATED
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
    "cache": "--no-cache",
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
    # the console (rich) loads with the first error: the help of abt and of its groups needs none
    from agent_backtest.cli.terminal import SafeConsole, one_line

    SafeConsole(stderr=True, highlight=False, soft_wrap=True).print(
        f"abt: error: {one_line(bounded(message, MESSAGE_CHARS))}", markup=False
    )


def report_stop(how: str) -> None:
    """Print ``abt: interrupted`` (or ``terminated``) on stderr."""
    print(f"abt: {how}", file=sys.stderr, flush=True)


# An exception a command ends with, mapped to what is printed and the exit code.
Endings = Mapping[type[BaseException], tuple[Callable[[Any], None], int]]


def ends_with(endings: Endings) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A command that ends on each exception of ``endings`` by printing its line and exiting
    with its code, never with a traceback (the first matching entry wins)."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return command(*args, **kwargs)
            except tuple(endings) as exc:
                say, code = next(end for kind, end in endings.items() if isinstance(exc, kind))
                say(exc)
                raise typer.Exit(code) from None

        return run

    return decorate


friendly_errors = ends_with(
    {
        UserError: (lambda exc: report(describe(exc)), USER_ERROR),
        Terminated: (lambda _: report_stop("terminated"), TERMINATED),
        KeyboardInterrupt: (lambda _: report_stop("interrupted"), INTERRUPTED),
    }
)
"""Turn a user mistake into one line on stderr and exit code 2, and a stop into its line and
exit code (130, 143), never a traceback."""
