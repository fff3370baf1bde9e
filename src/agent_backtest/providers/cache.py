"""The response cache: answers keyed by a hash of exactly what was sent, in one SQLite file.

The key covers the provider endpoint, the model, the seed and the whole payload, so a changed
prompt, tool or parameter is a new key and an unchanged one is answered from disk. Errors are
never stored: a rerun tries them again.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from agent_backtest.trace import LLMResponse, sha256_of

FILE_NAME = "responses.sqlite3"


def default_cache_dir() -> Path:
    """The user cache dir of the tool."""
    return Path(platformdirs.user_cache_dir("agent-backtest"))


def cache_key(provider: str, endpoint: str, payload_sha: str) -> str:
    """``sha256:…`` naming the call: the endpoint and the hash of the payload as sent (which
    holds the model, the seed and every parameter). Taking the payload's hash rather than the
    payload saves serialising a 20 KB request a second time on every call."""
    return sha256_of({"provider": provider, "endpoint": endpoint, "payload": payload_sha})


@dataclass
class CacheStats:
    """What the cache holds."""

    path: str
    entries: int
    bytes: int


class ResponseCache:
    """A content-addressed store of model answers (a private SQLite file)."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = directory / FILE_NAME
        fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)  # private before any write
        os.close(fd)
        self._db = sqlite3.connect(self.path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses "
            "(key TEXT PRIMARY KEY, value BLOB NOT NULL, stored REAL NOT NULL)"
        )
        self.hits = 0
        self.misses = 0
        self.stores = 0

    def get(self, key: str) -> LLMResponse | None:
        """The stored answer for ``key``, or None."""
        row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return LLMResponse.model_validate_json(row[0])

    def put(self, key: str, response: LLMResponse) -> None:
        """Store an answer (the first one stored for a key stays)."""
        value = response.model_dump_json(exclude_none=True)
        self._db.execute(
            "INSERT OR IGNORE INTO responses VALUES (?, ?, ?)", (key, value, time.time())
        )
        self.stores += 1

    def stats(self) -> CacheStats:
        """Entries and bytes on disk."""
        entries, size = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(value)), 0) FROM responses"
        ).fetchone()
        return CacheStats(str(self.path), entries, size)

    def clear(self) -> int:
        """Remove every entry; the number removed."""
        removed = self._db.execute("DELETE FROM responses").rowcount
        self._db.execute("VACUUM")
        return removed

    def close(self) -> None:
        """Close the database."""
        self._db.close()
