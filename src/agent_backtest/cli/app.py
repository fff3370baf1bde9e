"""The ``abt`` command: one module per subcommand, errors for people at this one place."""

from __future__ import annotations

import sys

import typer

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
from agent_backtest.cli.errors import friendly_errors
from agent_backtest.cli.patch import check as patch_check
from agent_backtest.cli.patch import patch_app

app = typer.Typer(
    name="abt",
    help="agent-backtest: what a change to an LLM agent would have done on its recorded traces.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
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
