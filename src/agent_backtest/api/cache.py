"""``cache_stats()`` and ``cache_clear()``: what the response cache holds, and emptying it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent_backtest.providers.cache import CacheStats, ResponseCache
from agent_backtest.providers.config import default_cache_dir

if TYPE_CHECKING:
    from agent_backtest.api.options import PathLike

__all__ = ["CacheStats", "ClearedCache", "cache_clear", "cache_stats"]


@dataclass(frozen=True)
class ClearedCache:
    """A cache emptied: where it is, and how many answers it held."""

    path: str
    removed: int


def cache_stats(cache_dir: PathLike | None = None) -> CacheStats:
    """The answers the response cache in ``cache_dir`` holds and their size (default: the user
    cache dir)."""
    cache = ResponseCache(Path(cache_dir) if cache_dir else default_cache_dir())
    try:
        return cache.stats()
    finally:
        cache.close()


def cache_clear(cache_dir: PathLike | None = None) -> ClearedCache:
    """Remove every answer of the response cache in ``cache_dir`` (default: the user cache
    dir)."""
    cache = ResponseCache(Path(cache_dir) if cache_dir else default_cache_dir())
    try:
        return ClearedCache(str(cache.path), cache.clear())
    finally:
        cache.close()
