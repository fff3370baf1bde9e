"""``abt cache``: what the response cache holds, and emptying it."""

from __future__ import annotations

import typer

from agent_backtest import api
from agent_backtest.cli.options import CacheDirectory


def stats(cache_dir: CacheDirectory = None) -> None:
    """Entries and size of the cache."""
    figures = api.cache_stats(cache_dir)
    typer.echo(f"{figures.path}: {figures.entries} answers, {figures.bytes / 1e6:.1f} MB")


def clear(cache_dir: CacheDirectory = None) -> None:
    """Remove every stored answer."""
    cleared = api.cache_clear(cache_dir)
    typer.echo(f"removed {cleared.removed} answers from {cleared.path}")
