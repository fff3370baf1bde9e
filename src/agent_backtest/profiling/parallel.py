"""Parallel tool calls: calls of one session whose time intervals overlap.

Two calls overlap when one starts before the other ends; intervals that only touch (one ends
exactly when the next starts) do not. A call without a start or end time cannot be placed, so it
is counted as missing rather than as "not parallel".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_backtest.profiling.distribution import Tally
from agent_backtest.runs.profile import ParallelCalls, RequestedTogether

Interval = tuple[int, int]


@dataclass(frozen=True)
class Overlap:
    """How a session's timed calls overlap."""

    overlapping: tuple[bool, ...]
    """Per interval, in the order given: True when it overlaps at least one other."""
    batches: int
    """Maximal runs of calls chained by overlaps, with two calls or more."""
    max_in_flight: int
    """The most calls running at one instant."""


def overlap(intervals: Sequence[Interval]) -> Overlap:
    """Overlaps among (start, end) intervals by a sweep in start order."""
    order = sorted(range(len(intervals)), key=lambda i: intervals[i])
    overlapping = [False] * len(intervals)
    batches, batch, batch_end = 0, [], 0
    for index in order:
        start, end = intervals[index]
        if batch and start < batch_end:
            batch.append(index)
            batch_end = max(batch_end, end)
            continue
        batches += _close(batch, overlapping)
        batch, batch_end = [index], end
    batches += _close(batch, overlapping)
    return Overlap(tuple(overlapping), batches, _max_in_flight(intervals))


def _close(batch: list[int], overlapping: list[bool]) -> int:
    """Mark a finished batch; 1 if it held parallel calls, else 0."""
    if len(batch) < 2:
        return 0
    for index in batch:
        overlapping[index] = True
    return 1


def _max_in_flight(intervals: Sequence[Interval]) -> int:
    """The most intervals open at one instant."""
    # At equal times an end (-1) sorts before a start (+1): touching intervals do not overlap.
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = most = 0
    for _, delta in events:
        running += delta
        most = max(most, running)
    # A call of zero duration overlaps nothing but is still one call in flight.
    return max(most, 1) if intervals else 0


class Parallel:
    """Parallel tool calls of a group: overlapping calls, batches, most in flight, requests."""

    def __init__(self) -> None:
        self.overlapping_calls = Tally("tool calls", integral=True)
        self.batches = Tally("sessions with tool calls", integral=True)
        self.max_in_flight: int | None = None
        self.requests_with_several_calls = 0
        self.calls_requested_together = 0

    def add_session(self, intervals: Sequence[Interval], untimed: int) -> None:
        """A session's timed tool call intervals and how many of its tool calls had no times."""
        found = overlap(intervals)
        for flag in found.overlapping:
            self.overlapping_calls.add(int(flag))
        for _ in range(untimed):
            self.overlapping_calls.lack("have no valid start and end time")
        if untimed:
            self.batches.lack("have tool calls with no valid start and end time")
        elif intervals:
            self.batches.add(found.batches)
        if intervals:
            self.max_in_flight = max(self.max_in_flight or 0, found.max_in_flight)

    def add_request(self, tool_calls: int) -> None:
        """An LLM answer that asked for ``tool_calls`` tool calls at once."""
        if tool_calls >= 2:
            self.requests_with_several_calls += 1
            self.calls_requested_together += tool_calls

    def figures(self) -> ParallelCalls:
        """Overlapping calls and batches (None when times are missing), and requested batches."""
        return ParallelCalls(
            overlapping_calls=self.overlapping_calls.figure(),
            batches=self.batches.figure(),
            max_in_flight=self.max_in_flight,
            requested_together=RequestedTogether(
                answers=self.requests_with_several_calls, calls=self.calls_requested_together
            ),
        )
