"""The airline database: the shipped tables, read once per process, and one episode's changes.

Every episode starts from the same 5 MB of JSON (300 flights, 2,000 reservations, 500 users).
Parsing it for each episode, and serialising all of it again for each state hash, would cost
a fifth of a second an episode; instead the tables are parsed once per process into a
:class:`Snapshot` that nothing writes, and an episode's :class:`Database` keeps its own copy of
only the records a tool changes. The state hash is the sha256 of the canonical JSON (sorted
keys, compact) of the whole database, computed from the snapshot's canonical text with only the
changed records serialised again (:mod:`~agent_backtest.bench.tau_airline.state_hash`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import orjson

from agent_backtest.bench.tau_airline.state_hash import CanonicalDatabase

__all__ = ["TABLES", "Database", "Snapshot", "snapshot"]

TABLES = ("flights", "reservations", "users")
"""The tables, in the order their keys sort in the canonical JSON."""


@dataclass(frozen=True)
class Snapshot:
    """The shipped tables as parsed once, and their canonical JSON. Never written."""

    records: dict[str, dict[str, dict[str, Any]]]
    canonical: CanonicalDatabase


@cache
def snapshot() -> Snapshot:
    """The shipped database, parsed on first use and shared by every episode of the process."""
    folder = resources.files("agent_backtest.bench.tau_airline") / "data"
    records = {name: orjson.loads((folder / f"{name}.json").read_bytes()) for name in TABLES}
    return Snapshot(records, CanonicalDatabase.of(records))


class Database:
    """One episode's database: the snapshot, seen through the records this episode changed.

    Tools read with :meth:`get` and :meth:`values` and must not change what those return; a
    tool that changes a record asks for it with :meth:`writable`, which copies it into the
    episode the first time, or adds one with :meth:`add`.
    """

    def __init__(self, base: Snapshot | None = None) -> None:
        self.base = base or snapshot()
        self.changed: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in TABLES}

    def get(self, table: str, key: Any) -> dict[str, Any] | None:
        """The record ``key`` of ``table`` as the episode sees it, or None; read only."""
        changed = self.changed[table]
        if key in changed:
            return changed[key]
        return self.base.records[table].get(key)

    def has(self, table: str, key: Any) -> bool:
        """Whether ``table`` holds ``key`` (an unhashable key raises TypeError, as a dict does)."""
        return key in self.changed[table] or key in self.base.records[table]

    def values(self, table: str) -> Iterator[dict[str, Any]]:
        """Every record of ``table`` in the file's order, then the added ones; read only."""
        changed = self.changed[table]
        for key, record in self.base.records[table].items():
            yield changed.get(key, record)
        for key, record in changed.items():
            if key not in self.base.records[table]:
                yield record

    def writable(self, table: str, key: str) -> dict[str, Any]:
        """The record ``key`` of ``table``, this episode's own copy, for a tool to change."""
        changed = self.changed[table]
        if key not in changed:
            changed[key] = orjson.loads(orjson.dumps(self.base.records[table][key]))
        return changed[key]

    def add(self, table: str, key: str, record: dict[str, Any]) -> None:
        """Put ``record`` in ``table`` under ``key``, replacing what was there."""
        self.changed[table][key] = record

    def state_hash(self) -> str:
        """``sha256:<hex>`` of the canonical JSON of the whole database."""
        return self.base.canonical.state_hash(self.changed)
