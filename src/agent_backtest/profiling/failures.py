"""Failures: what kinds of error each tool (and model) ran into, and what the agent did next.

What followed a failed tool call is read from the next tool call of the same turn: the same tool
again (a retry), a different tool, or none (the turn ended, with or without a model answer).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Literal

from agent_backtest.profiling.availability import availability
from agent_backtest.profiling.facts import error_kind, has_failed, model_of, tool_name_of
from agent_backtest.runs.profile import Failures, FollowUps
from agent_backtest.trace import Step

FollowUp = Literal["retry_same_tool", "other_tool", "end_of_turn"]
UNKNOWN = "record no status: whether they failed is not known"
FOLLOW_UPS: tuple[FollowUp, ...] = ("retry_same_tool", "other_tool", "end_of_turn")


def follow_ups(tool_steps: Sequence[Step]) -> list[tuple[Step, FollowUp]]:
    """Each failed tool call of one turn and what followed it (``tool_steps`` in turn order)."""
    found: list[tuple[Step, FollowUp]] = []
    for index, step in enumerate(tool_steps):
        if not has_failed(step):
            continue
        if index + 1 == len(tool_steps):
            found.append((step, "end_of_turn"))
        elif tool_name_of(tool_steps[index + 1]) == tool_name_of(step):
            found.append((step, "retry_same_tool"))
        else:
            found.append((step, "other_tool"))
    return found


class FailureTally:
    """Error kinds by tool and by model, and the follow-up of each failed tool call."""

    def __init__(self) -> None:
        self.tool_kinds: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.llm_kinds: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.followed_by: Counter[str] = Counter()
        self.followed_by_tool: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.tool_calls = 0
        self.unknown = Counter({UNKNOWN: 0})

    def add_llm(self, step: Step) -> None:
        """An LLM call: its error kind if it failed."""
        if has_failed(step):
            self.llm_kinds[model_of(step)][error_kind(step)] += 1

    def add_turn(self, tool_steps: Sequence[Step]) -> None:
        """A turn's tool calls: error kinds and follow-ups of the failed ones."""
        self.tool_calls += len(tool_steps)
        self.unknown[UNKNOWN] += sum(
            step.status is None and not has_failed(step) for step in tool_steps
        )
        for step, follow_up in follow_ups(tool_steps):
            name = tool_name_of(step)
            self.tool_kinds[name][error_kind(step)] += 1
            self.followed_by[follow_up] += 1
            self.followed_by_tool[name][follow_up] += 1

    def figures(self) -> Failures:
        """Failed calls by kind and what followed them; unavailable when statuses are missing."""
        return Failures(
            **availability(self.unknown, self.tool_calls, "tool calls"),
            tool_error_kinds=_nested(self.tool_kinds),
            llm_error_kinds=_nested(self.llm_kinds),
            tool_failures_followed_by=_follow_ups(self.followed_by),
            tool_failures_followed_by_tool={
                name: _follow_ups(self.followed_by_tool[name])
                for name in sorted(self.followed_by_tool)
            },
        )


def _follow_ups(counts: Counter[str]) -> FollowUps:
    """Every follow-up with its count, zeros included."""
    return FollowUps(**{follow_up: counts[follow_up] for follow_up in FOLLOW_UPS})


def _nested(counts: dict[str, Counter[str]]) -> dict[str, dict[str, int]]:
    """Counts by name and kind as sorted plain dicts."""
    return {name: dict(sorted(counts[name].items())) for name in sorted(counts)}
