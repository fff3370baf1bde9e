"""Choosing which units to replay: by kind, node, model, agent version, split, excluded sessions
and a limit."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the API's option groups read the salt below without loading the models
    from agent_backtest.units.exclusions import ExcludedSessions
    from agent_backtest.units.model import Split, Unit

DEFAULT_SPLIT_SALT = "abt-split-1"


@dataclass(frozen=True)
class ExclusionSummary:
    """What an exclusion file did: how many sessions it names, how many the input held."""

    file: str
    sessions: int
    matched: int


@dataclass
class Selection:
    """The selection flags of ``abt units`` (and later ``abt replay``)."""

    steps: Literal["router", "action", "all"] = "all"
    nodes: frozenset[str] = frozenset()
    models: frozenset[str] = frozenset()
    agent_versions: frozenset[str] = frozenset()
    """Keep only units served by one of these agent versions (as their traces recorded it)."""
    val_fraction: float | None = None
    split_salt: str = DEFAULT_SPLIT_SALT
    split: Literal["test", "val", "all"] = "all"
    excluded_sessions: ExcludedSessions | None = None
    limit: int | None = None
    per_session: int | None = None
    """Keep at most this many units of each session (the first ones): a slice across sessions."""
    dropped: Counter[str] = field(default_factory=Counter)
    """Units left out, by the filter that left them out."""
    excluded_met: set[str] = field(default_factory=set)
    """The excluded sessions met in the input so far."""

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

    def exclusion(self) -> ExclusionSummary | None:
        """The exclusion file, how many sessions it names and how many of them were met."""
        if self.excluded_sessions is None:
            return None
        return ExclusionSummary(
            self.excluded_sessions.file, len(self.excluded_sessions.ids), len(self.excluded_met)
        )

    def _reject(self, unit: Unit) -> str | None:
        if self.excluded_sessions is not None and unit.session_id in self.excluded_sessions.ids:
            self.excluded_met.add(unit.session_id)
            return "excluded_session"
        if self.steps != "all" and unit.kind != self.steps:
            return "other_kind"
        if self.nodes and unit.node not in self.nodes:
            return "other_node"
        if self.models and unit.recorded_model not in self.models:
            return "other_model"
        if self.agent_versions and unit.agent_version not in self.agent_versions:
            return "other_agent_version" if unit.agent_version else "agent_version_not_recorded"
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
