"""The response cache: answers keyed by a hash of exactly what was sent, in one SQLite file.

The key covers the provider endpoint, the model, the seed and the whole payload, so a changed
prompt, tool or parameter is a new key and an unchanged one is answered from disk. Errors are
never stored: a rerun tries them again.

The cache holds prompts and answers: a new cache directory is made 0700 and the file 0600, and
a directory other users can read or write gets a :class:`CacheWarning` when opened. An answer
the cache cannot store (a full disk, a read-only file, a database another process keeps locked)
never stops a run: ``put`` says so, warns once, and stores nothing more from then on, so a lock
held elsewhere cannot stall every call for the busy timeout.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from agent_backtest.errors import UserError
from agent_backtest.trace import LLMResponse, sha256_of

FILE_NAME = "responses.sqlite3"
BUSY_TIMEOUT = 1.0  # seconds a write waits for another process's write to the same cache


class CacheWarning(UserWarning):
    """The response cache cannot do all of its job; the run goes on, and the message says what
    to do. Silence it with ``warnings.simplefilter("ignore", CacheWarning)``."""


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

    def __init__(self, directory: Path, *, warn_if_shared: bool = True) -> None:
        self.path = directory / FILE_NAME
        try:
            self._db = _open(directory, self.path)
        except (OSError, sqlite3.Error) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise UserError(
                f"cannot open the response cache {self.path} ({reason}): "
                "name another cache directory, or run without the cache",
                "cache_dir",
            ) from None
        if warn_if_shared:
            _warn_if_shared(directory)
        self.hits = 0
        self.misses = 0
        self.stores = 0
        self.write_error: str | None = None
        """Why the first answer that could not be stored was not; None while all were."""
        self.read_error: str | None = None
        """Why the first stored answer that could not be read back was not."""

    @classmethod
    def existing(cls, directory: Path) -> ResponseCache | None:
        """The cache in ``directory`` if it has been made, to look answers up in; None (and
        nothing created) when it has not, as a cache that does not exist holds no answer.
        Whether others may read the folder is said when the run opens it to store answers."""
        if not (directory / FILE_NAME).is_file():
            return None
        return cls(directory, warn_if_shared=False)

    def get(self, key: str) -> LLMResponse | None:
        """The stored answer for ``key``, or None (also for one the cache cannot give back: a
        damaged database or entry is a miss, and the call is sent)."""
        try:
            row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            response = None if row is None else LLMResponse.model_validate_json(row[0])
        except (sqlite3.Error, ValidationError) as exc:
            self._warn_unreadable(exc)
            response = None
        if response is None:
            self.misses += 1
            return None
        self.hits += 1
        return response

    def _warn_unreadable(self, error: Exception) -> None:
        """One :class:`CacheWarning` for the first answer the cache could not give back."""
        if self.read_error is None:
            self.read_error = str(error).splitlines()[0][:200]
            warnings.warn(
                f"response cache {self.path}: a stored answer could not be read "
                f"({self.read_error}); such calls are sent again (abt cache clear empties it)",
                CacheWarning,
                stacklevel=3,
            )

    def put(self, key: str, response: LLMResponse) -> bool:
        """Store an answer (the first one stored for a key stays); False when it was not stored.

        After the first failure nothing more is stored (see the module's docstring)."""
        if self.write_error is not None:
            return False
        value = response.model_dump_json(exclude_none=True)
        try:
            self._db.execute(
                "INSERT OR IGNORE INTO responses VALUES (?, ?, ?)", (key, value, time.time())
            )
        except sqlite3.Error as exc:
            self.write_error = str(exc)
            warnings.warn(
                f"response cache {self.path}: an answer could not be stored ({exc}); the run goes "
                "on without storing more, so a rerun will send those calls again",
                CacheWarning,
                stacklevel=2,
            )
            return False
        self.stores += 1
        return True

    def stats(self) -> CacheStats:
        """Entries and bytes on disk."""
        try:
            entries, size = self._db.execute(
                "SELECT COUNT(*), COALESCE(SUM(LENGTH(value)), 0) FROM responses"
            ).fetchone()
        except sqlite3.Error as exc:
            raise self._damaged(exc) from None
        return CacheStats(str(self.path), entries, size)

    def clear(self) -> int:
        """Remove every entry; the number removed."""
        try:
            removed = self._db.execute("DELETE FROM responses").rowcount
            self._db.execute("VACUUM")
        except sqlite3.Error as exc:
            raise self._damaged(exc) from None
        return removed

    def _damaged(self, error: sqlite3.Error) -> UserError:
        return UserError(
            f"the response cache {self.path} cannot be read ({error}): remove the file, or name "
            "another cache directory",
            "cache_dir",
        )

    def close(self) -> None:
        """Close the database."""
        self._db.close()


def _open(directory: Path, path: Path) -> sqlite3.Connection:
    """The cache database, created private: the folder 0700, the file 0600 before any write."""
    _private_mkdir(directory)
    os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
    db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(
            "CREATE TABLE IF NOT EXISTS responses "
            "(key TEXT PRIMARY KEY, value BLOB NOT NULL, stored REAL NOT NULL)"
        )
    except sqlite3.Error:
        db.close()
        raise
    return db


def _private_mkdir(directory: Path) -> None:
    """Make ``directory`` and its missing parents 0700 whatever the umask (``mkdir -p`` gives
    parents the umask's mode; runs' folders are made the same way, by ``runs.files``)."""
    missing = [folder for folder in (directory, *directory.parents) if not folder.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)


def _warn_if_shared(directory: Path) -> None:
    """A :class:`CacheWarning` when users other than the owner may read or write the folder."""
    mode = stat.S_IMODE(directory.stat().st_mode)
    if mode & 0o077:
        warnings.warn(
            f"response cache {directory} is open to other users (mode {mode:04o}) and holds "
            f"prompts and answers: chmod 700 {directory}",
            CacheWarning,
            stacklevel=3,
        )
