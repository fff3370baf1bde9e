"""Where each record of a run's JSONL file starts, by unit and repeat, kept small.

A run's files grow with it, and a reader that joins two of them must find a unit's records
without holding them; this holds about a hundred bytes a record. A unit is known by a 16-byte
digest of its id (two ids sharing one is as likely as a sha256 collision), and its one record,
the usual case, by a bare int packing offset and repeat.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

REPEAT_BITS = 20  # repeats below 2**20 (a million) share an int with their offset
Placed = list[tuple[int, int]]  # (repeat, offset) of each record of a unit, by repeat


class UnitOffsets:
    """The offset of each (unit, repeat)'s record, the first one added of each."""

    def __init__(self) -> None:
        self._places: dict[bytes, int | list[int]] = {}

    def add(self, unit_id: str, repeat: int, offset: int) -> bool:
        """Remember where (``unit_id``, ``repeat``) starts; False when it was already known."""
        if not 0 <= repeat < 1 << REPEAT_BITS:
            raise ValueError(f"repeat {repeat} is out of range")
        key = unit_key(unit_id)
        packed = offset << REPEAT_BITS | repeat
        known = self._places.get(key)
        if known is None:
            self._places[key] = packed
            return True
        packs = [known] if isinstance(known, int) else known
        if any(_unpack(p)[0] == repeat for p in packs):
            return False
        self._places[key] = [*packs, packed]
        return True

    def units(self) -> Iterator[bytes]:
        """The key of every unit, in the order of its first record."""
        return iter(list(self._places))

    def of(self, key: bytes) -> Placed:
        """The (repeat, offset) of each record of the unit of ``key``, by repeat."""
        known = self._places.get(key)
        if known is None:
            return []
        return sorted(_unpack(p) for p in ([known] if isinstance(known, int) else known))

    def pop(self, key: bytes) -> Placed:
        """:meth:`of`, forgotten here."""
        placed = self.of(key)
        self._places.pop(key, None)
        return placed


def unit_key(unit_id: str) -> bytes:
    """The 16-byte digest a unit is known by."""
    return hashlib.blake2b(unit_id.encode(), digest_size=16).digest()


def _unpack(packed: int) -> tuple[int, int]:
    return packed & ((1 << REPEAT_BITS) - 1), packed >> REPEAT_BITS
