"""The ``abt`` command: one module per subcommand, errors for people at this one place."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import typer
from rich.console import Console

from agent_backtest.cli import (
    compare,
    gate,
    ingest,
    profile,
    replay,
    report,
    schema,
    score,
    show,
    units,
)
from agent_backtest.cli.cache import cache_app
from agent_backtest.cli.patch import check as patch_check
from agent_backtest.cli.patch import patch_app
from agent_backtest.formats import InputError

app = typer.Typer(
    name="abt",
    help="agent-backtest: what a change to an LLM agent would have done on its recorded traces.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
USER_ERROR = 2
INTERRUPTED = 130


def friendly_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a user mistake into one line on stderr and exit code 2, never a traceback."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except InputError as exc:
            Console(stderr=True, highlight=False, soft_wrap=True).print(
                f"abt: error: {exc}", markup=False
            )
            raise typer.Exit(USER_ERROR) from None
        except KeyboardInterrupt:
            Console(stderr=True).print("abt: interrupted", markup=False)
            raise typer.Exit(INTERRUPTED) from None

    return run


for name, function in (
    ("ingest", ingest.ingest),
    ("units", units.units),
    ("replay", replay.replay),
    ("score", score.score),
    ("report", report.report),
    ("compare", compare.compare),
    ("gate", gate.gate),
    ("show", show.show),
    ("schema", schema.schema),
    ("profile", profile.profile),
):
    app.command(name)(friendly_errors(function))


app.add_typer(cache_app, name="cache")
patch_app.command("check")(friendly_errors(patch_check))
app.add_typer(patch_app, name="patch")


def main() -> None:
    """Entry point of the ``abt`` and ``agent-backtest`` console scripts."""
    sys.exit(app())
