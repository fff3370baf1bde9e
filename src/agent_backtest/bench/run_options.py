"""What a bench run is asked to run: which cases, and how many rollouts of each and how.

Plain data, as a Python caller or ``abt bench run`` fills it in (the API takes these groups as
they are); the run checks the values when it is planned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class CaseOptions:
    """Which cases of the benchmark to run."""

    case_ids: Sequence[str] = ()
    """Run only these cases, in this order (repeatable)."""
    shard_count: int = 1
    """Split the (chosen) cases, sorted by id, into this many shards."""
    shard_index: int = 0
    """Run this shard (from 0)."""
    limit: int | None = None
    """Run at most this many cases (after the ids and the shard)."""


@dataclass
class RolloutOptions:
    """How many episodes per case, their seeds, and how they run."""

    rollouts: int = 1
    """Episodes per case."""
    seed: int = 0
    """Base seed; rollout i of a case is seeded by the first 31 bits of sha256(seed:case:i)."""
    concurrency: int = 1
    """Episodes at once."""
    episode_timeout: float = 600.0
    """Seconds one episode may take; past them it ends as an engineering error."""
