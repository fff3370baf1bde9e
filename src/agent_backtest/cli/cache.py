"""``abt cache``: what the response cache holds, and emptying it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent_backtest.providers.cache import ResponseCache
from agent_backtest.providers.config import default_cache_dir

CacheDirOption = Annotated[
    Path | None,
    typer.Option("--cache-dir", metavar="DIR", help="[default: the user cache dir]"),
]


def stats(cache_dir: CacheDirOption = None) -> None:
    """Entries and size of the cache."""
    cache = ResponseCache(cache_dir or default_cache_dir())
    figures = cache.stats()
    cache.close()
    typer.echo(f"{figures.path}: {figures.entries} answers, {figures.bytes / 1e6:.1f} MB")


def clear(cache_dir: CacheDirOption = None) -> None:
    """Remove every stored answer."""
    cache = ResponseCache(cache_dir or default_cache_dir())
    removed = cache.clear()
    cache.close()
    typer.echo(f"removed {removed} answers from {cache.path}")
