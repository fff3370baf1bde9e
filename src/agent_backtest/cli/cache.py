"""``abt cache``: what the response cache holds, and emptying it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent_backtest import api

CacheDirOption = Annotated[
    Path | None,
    typer.Option("--cache-dir", metavar="DIR", help="[default: the user cache dir]"),
]


def stats(cache_dir: CacheDirOption = None) -> None:
    """Entries and size of the cache."""
    figures = api.cache_stats(cache_dir)
    typer.echo(f"{figures.path}: {figures.entries} answers, {figures.bytes / 1e6:.1f} MB")


def clear(cache_dir: CacheDirOption = None) -> None:
    """Remove every stored answer."""
    cleared = api.cache_clear(cache_dir)
    typer.echo(f"removed {cleared.removed} answers from {cleared.path}")
