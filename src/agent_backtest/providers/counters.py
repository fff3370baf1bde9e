"""The counts of a run's model calls: paid for, reused, retried, failed, and tokens.

Kept apart from the client so that a command that only reports counts (``abt score`` without a
judge) loads none of the call machinery.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields, replace
from typing import Any

from agent_backtest.trace import Usage


@dataclass
class CallCounters:
    """Calls paid for, answers reused, errors and tokens, for the run manifest.

    ``calls`` counts every HTTP attempt: retries, and the call sent again after a credential
    refresh, included. ``changes`` goes up with every count, so a driver that persists the counts
    while the run goes can skip writing when nothing moved since its last :meth:`snapshot`.
    """

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    credential_refreshes: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    cache_write_errors: int = 0
    """Answers the response cache could not store (a rerun will pay for them again)."""
    model_load_seconds: float = 0.0
    """Time an in-process model took to load before its first answer (not in any latency)."""
    changes: int = 0

    def count_call(self) -> None:
        """One request sent."""
        self.calls += 1
        self.changes += 1

    def count_retry(self) -> None:
        """One more try of a call after a retried error."""
        self.retries += 1
        self.changes += 1

    def count_cache_hit(self) -> None:
        """One answer taken from the cache instead of a call."""
        self.cache_hits += 1
        self.changes += 1

    def count_credential_refresh(self) -> None:
        """One fresh key from the credential command."""
        self.credential_refreshes += 1
        self.changes += 1

    def count_error(self, kind: str) -> None:
        """One call that ended in an infrastructure error of ``kind``."""
        self.errors[kind] += 1
        self.changes += 1

    def count_cache_write_error(self) -> None:
        """One answer the cache could not store."""
        self.cache_write_errors += 1
        self.changes += 1

    def count_model_load(self, seconds: float) -> None:
        """An in-process model loaded, taking ``seconds``."""
        if seconds:
            self.model_load_seconds += seconds
            self.changes += 1

    def count_usage(self, usage: Usage | None) -> None:
        """The tokens of one answer, when it says."""
        if usage is not None:
            self.input_tokens += usage.input_tokens or 0
            self.output_tokens += usage.output_tokens or 0
            self.changes += 1

    def add(self, other: CallCounters) -> None:
        """Count ``other``'s calls here too (the counts of calls made in another process)."""
        self.calls += other.calls
        self.cache_hits += other.cache_hits
        self.retries += other.retries
        self.credential_refreshes += other.credential_refreshes
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.errors.update(other.errors)
        self.cache_write_errors += other.cache_write_errors
        self.model_load_seconds += other.model_load_seconds
        self.changes += 1

    def snapshot(self) -> CallCounters:
        """A copy of the counts now, that later calls do not change (to persist, or compare)."""
        return replace(self, errors=Counter(self.errors))

    def as_dict(self) -> dict[str, Any]:
        """Plain data for run.json: every count (``changes`` is not one), errors by kind in
        name order, the load time to the millisecond."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "changes"}
        data["errors"] = dict(sorted(self.errors.items()))
        data["model_load_seconds"] = round(self.model_load_seconds, 3)
        return data
