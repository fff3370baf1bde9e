"""The sha256 of a database's canonical JSON, when a few records differ from a known one.

The canonical JSON (sorted keys, compact) of the shipped airline database is 3 MB, and every
episode is hashed twice (its end, and the gold's). :class:`CanonicalDatabase` keeps that text
once, with where each record's value sits in it and the digest's state every
:data:`CHECKPOINT` bytes; the hash of a database with some records changed or added starts from
the last checkpoint before the first change, feeds the shipped bytes between the changes as
they are, and serialises only the changed records: the same hash as of the whole text written
anew, for a fraction of the bytes.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from agent_backtest.trace.serialize import canonical_json

__all__ = ["CHECKPOINT", "CanonicalDatabase"]

CHECKPOINT = 64 * 1024
"""Bytes between two saved digest states."""

Tables = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class CanonicalDatabase:
    """The canonical JSON of a database of tables of records, and where each record sits."""

    text: bytes
    keys: dict[str, list[str]]
    """Each table's keys, sorted as in ``text``."""
    spans: dict[str, dict[str, tuple[int, int, int]]]
    """Per table and key: where its entry (``"KEY":``) starts, where its value starts and ends."""
    closes: dict[str, int]
    """Where each table's closing brace is."""
    checkpoints: list[Any]
    """The digest after ``text[:i * CHECKPOINT]``, for each i."""

    @classmethod
    def of(cls, tables: Tables) -> CanonicalDatabase:
        """The database's canonical JSON, written entry by entry to note the places."""
        writer = _Writer()
        keys, spans, closes = {}, {}, {}
        writer.put(b"{")
        for index, name in enumerate(sorted(tables)):
            writer.put((b"," if index else b"") + orjson.dumps(name) + b":{")
            keys[name], spans[name] = sorted(tables[name]), {}
            for position, key in enumerate(keys[name]):
                start = writer.put(b"," if position else b"")
                head = writer.put(orjson.dumps(key) + b":")
                spans[name][key] = (start, head, writer.put(canonical_json(tables[name][key])))
            closes[name] = writer.put(b"}") - 1
        writer.put(b"}")
        text = writer.text()
        checkpoints, digest = [], hashlib.sha256()
        for offset in range(0, len(text) + 1, CHECKPOINT):
            checkpoints.append(digest.copy())
            digest.update(text[offset : offset + CHECKPOINT])
        return cls(text, keys, spans, closes, checkpoints)

    def state_hash(self, changed: Mapping[str, Mapping[str, Any]]) -> str:
        """``sha256:<hex>`` of the canonical JSON of the database with ``changed`` records (per
        table, by key) in place of the shipped ones or added to them."""
        edits = list(self._edits(changed))
        first = edits[0][0] if edits else len(self.text)
        digest = self.checkpoints[first // CHECKPOINT].copy()
        done = first // CHECKPOINT * CHECKPOINT
        view = memoryview(self.text)
        for start, end, data in edits:
            digest.update(view[done:start])
            digest.update(data)
            done = end
        digest.update(view[done:])
        return "sha256:" + digest.hexdigest()

    def _edits(self, changed: Mapping[str, Mapping[str, Any]]) -> Iterator[Edit]:
        """(start, end, bytes): ``text[start:end]`` is to read ``bytes``; in the order of the text,
        since the tables and their keys are taken in the order they are written."""
        for name in sorted(changed):
            records = changed[name]
            keys, spans, empty = self.keys[name], self.spans[name], not self.keys[name]
            for key in sorted(records):
                value = canonical_json(records[key])
                if key in spans:
                    _, start, end = spans[key]
                    yield start, end, value
                    continue
                entry = orjson.dumps(key) + b":" + value
                following = bisect.bisect(keys, key)
                if following < len(keys):
                    start = spans[keys[following]][0]
                    yield start, start, entry + b","
                else:  # after the last shipped key: before the table's closing brace
                    close = self.closes[name]
                    yield close, close, (b"" if empty else b",") + entry
                    empty = False


Edit = tuple[int, int, bytes]


class _Writer:
    """Bytes written in pieces, with the offset each piece ends at."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def put(self, data: bytes) -> int:
        """Append ``data``; the offset just after it."""
        self.parts.append(data)
        self.size += len(data)
        return self.size

    def text(self) -> bytes:
        return b"".join(self.parts)
