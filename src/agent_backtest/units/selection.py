"""Choosing which units to replay: by kind, node, model, split, excluded sessions and a limit."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import orjson

from agent_backtest.errors import InputError
from agent_backtest.units.model import Split, Unit

DEFAULT_SPLIT_SALT = "abt-split-1"


@dataclass
class Selection:
    """The selection flags of ``abt units`` (and later ``abt replay``)."""

    steps: Literal["router", "action", "all"] = "all"
    nodes: frozenset[str] = frozenset()
    models: frozenset[str] = frozenset()
    val_fraction: float | None = None
    split_salt: str = DEFAULT_SPLIT_SALT
    split: Literal["test", "val", "all"] = "all"
    excluded_sessions: frozenset[str] = frozenset()
    limit: int | None = None
    per_session: int | None = None
    """Keep at most this many units of each session (the first ones): a slice across sessions."""
    dropped: Counter[str] = field(default_factory=Counter)
    """Units left out, by the filter that left them out."""

    def __post_init__(self) -> None:
        if self.val_fraction is not None and not 0.0 <= self.val_fraction <= 1.0:
            raise ValueError("--val-fraction must be between 0 and 1")
        if self.split != "all" and self.val_fraction is None:
            raise ValueError("--split needs --val-fraction (and the --split-salt used before)")

    def apply(self, units: Iterable[Unit]) -> Iterator[Unit]:
        """The units that pass every filter, labelled with their split, up to the limit."""
        kept = 0
        per_session: Counter[str] = Counter()
        for unit in units:
            if self.val_fraction is not None:
                unit.split = split_of(unit.session_id, self.val_fraction, self.split_salt)
            reason = self._reject(unit)
            if reason is None and self.per_session is not None:
                per_session[unit.session_id] += 1
                if per_session[unit.session_id] > self.per_session:
                    reason = "over_per_session"
            if reason:
                self.dropped[reason] += 1
                continue
            if self.limit is not None and kept >= self.limit:
                self.dropped["over_limit"] += 1
                continue
            kept += 1
            yield unit

    def _reject(self, unit: Unit) -> str | None:
        if unit.session_id in self.excluded_sessions:
            return "excluded_session"
        if self.steps != "all" and unit.kind != self.steps:
            return "other_kind"
        if self.nodes and unit.node not in self.nodes:
            return "other_node"
        if self.models and unit.recorded_model not in self.models:
            return "other_model"
        if self.split != "all" and unit.split != self.split:
            return "other_split"
        return None


def split_of(session_id: str, val_fraction: float, salt: str) -> Split:
    """val or test, from a salted hash of the session id: stable across runs and machines.

    Whole sessions land on one side, so no conversation leaks between val and test.
    """
    digest = hashlib.sha256(f"{salt}\x1f{session_id}".encode()).digest()
    position = int.from_bytes(digest[:8], "big") / 2**64
    return "val" if position < val_fraction else "test"


def read_session_ids(path: Path) -> frozenset[str]:
    """Session ids from a file of ids (one per line), a units/sessions JSONL, or a run directory.

    A run directory contributes the sessions of its ``units.jsonl``.
    """
    if path.is_dir():
        path = path / "units.jsonl"
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise InputError(path, None, f"cannot read the excluded sessions: {exc.strerror}") from None
    ids = set()
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith(b"#"):
            continue
        if text.startswith(b"{"):
            ids.add(_session_id_of_record(path, number, text))
        else:
            ids.add(text.decode("utf-8", errors="replace"))
    return frozenset(ids)


def _session_id_of_record(path: Path, number: int, text: bytes) -> str:
    try:
        record = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise InputError(path, f"line {number}", "not valid JSON") from None
    if isinstance(record, dict):
        if isinstance(record.get("session_id"), str):
            return record["session_id"]
        if str(record.get("schema", "")).startswith("abt.session/") and isinstance(
            record.get("id"), str
        ):
            return record["id"]
    raise InputError(
        path,
        f"line {number}",
        "a JSON line needs a session_id (a units or results file) or an id (a sessions file)",
    )
