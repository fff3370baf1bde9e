"""Where a session's time goes: service time of each call, gaps between calls, session span.

A gap is the time from the end of everything that ran so far to the start of the next call, in
the session's step order: time spent outside the model and the tools (agent code, queues, the
user between turns). A call that starts before the earlier calls ended overlaps them and leaves
no gap; it is counted as an overlapped transition. Gaps inside a turn and between turns (which
include the user's own time) are kept apart.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise

from agent_backtest.profiling.distribution import Distribution
from agent_backtest.profiling.facts import micros, model_of, tool_name_of
from agent_backtest.runs.profile import (
    DistributionFigure,
    Gaps,
    LLMTimes,
    SpanFigure,
    Times,
    ToolTimes,
)
from agent_backtest.trace import Step

TRANSITION_NOUN = "transitions between calls"
CALL_KINDS = frozenset({"llm", "tool"})


@dataclass(frozen=True, slots=True)
class StepTime:
    """One step's place in its session: kind, turn, start and end (µs since the epoch or None)."""

    kind: str
    turn: int
    start: int | None
    end: int | None

    def duration_ms(self) -> float | str:
        """Service time in milliseconds, or why there is none (completing "N of M …")."""
        if self.start is None and self.end is None:
            return "have no start or end time"
        if self.start is None:
            return "have no start time"
        if self.end is None:
            return "have no end time"
        if self.end < self.start:
            return "end before they start"
        return (self.end - self.start) / 1000


@dataclass(frozen=True)
class Transition:
    """From one call to the next: its name, whether it crosses turns, and the gap."""

    name: str
    between_turns: bool
    gap_ms: float | str | None
    """Milliseconds, the reason there is none (a string), or None when the calls overlap."""


def step_time(step: Step, turn: int) -> StepTime:
    """A step's kind, turn and times, read once."""
    return StepTime(step.kind, turn, micros(step.started_at), micros(step.ended_at))


def transitions(calls: Sequence[StepTime]) -> Iterator[Transition]:
    """Each transition between consecutive calls (LLM and tool steps), with its gap."""
    latest_end: int | None = None
    for before, after in pairwise(calls):
        if before.end is not None:
            latest_end = before.end if latest_end is None else max(latest_end, before.end)
        name = f"{before.kind}_to_{after.kind}"
        crosses = before.turn != after.turn
        if before.end is None:
            yield Transition(name, crosses, "follow a call with no end time")
        elif after.start is None:
            yield Transition(name, crosses, "lead to a call with no start time")
        else:
            gap = after.start - max(before.end, latest_end or 0)
            yield Transition(name, crosses, gap / 1000 if gap >= 0 else None)


def span_ms(steps: Sequence[StepTime]) -> float | str:
    """From the earliest start to the latest end of any step, or why there is no span."""
    starts = [step.start for step in steps if step.start is not None]
    ends = [step.end for step in steps if step.end is not None]
    if not starts and not ends:
        return "record no step times"
    if not starts:
        return "record no step start time"
    if not ends:
        return "record no step end time"
    if max(ends) < min(starts):
        return "end before they start"
    return (max(ends) - min(starts)) / 1000


class Timing:
    """Service times by model and tool, gaps by transition, and session spans of a group."""

    def __init__(self) -> None:
        self.llm = Distribution("LLM calls")
        self.llm_by_model: defaultdict[str, Distribution] = defaultdict(
            lambda: Distribution("LLM calls")
        )
        self.tool = Distribution("tool calls")
        self.tool_by_name: defaultdict[str, Distribution] = defaultdict(
            lambda: Distribution("tool calls")
        )
        self.gaps = Distribution(TRANSITION_NOUN + " within a turn")
        self.gaps_by_transition: defaultdict[str, Distribution] = defaultdict(
            lambda: Distribution(TRANSITION_NOUN + " within a turn")
        )
        self.between_turns = Distribution(TRANSITION_NOUN + " across turns")
        self.overlapped = 0
        self.spans = Distribution("sessions")
        self.sessions_partly_timed = 0

    def add_call(self, step: Step, time: StepTime) -> None:
        """One LLM or tool call's service time."""
        value = time.duration_ms()
        if step.kind == "llm":
            self.llm.add_or_lack(value)
            self.llm_by_model[model_of(step)].add_or_lack(value)
        else:
            self.tool.add_or_lack(value)
            self.tool_by_name[tool_name_of(step)].add_or_lack(value)

    def add_session(self, steps: Sequence[StepTime]) -> None:
        """A session's gaps between calls (its LLM and tool steps) and its span (all steps)."""
        calls = [step for step in steps if step.kind in CALL_KINDS]
        for transition in transitions(calls):
            if transition.gap_ms is None:
                self.overlapped += 1
            elif transition.between_turns:
                self.between_turns.add_or_lack(transition.gap_ms)
            else:
                self.gaps.add_or_lack(transition.gap_ms)
                self.gaps_by_transition[transition.name].add_or_lack(transition.gap_ms)
        self.spans.add_or_lack(span_ms(steps))
        untimed = any(step.start is None or step.end is None for step in steps)
        if untimed and steps:
            self.sessions_partly_timed += 1

    def figures(self) -> Times:
        """Every time figure as a distribution in milliseconds."""
        note = (
            f"{self.sessions_partly_timed} sessions have steps without times: "
            "their span covers the timed steps only"
            if self.sessions_partly_timed
            else None
        )
        return Times(
            llm_service_ms=LLMTimes(all=self.llm.figure(), by_model=_each(self.llm_by_model)),
            tool_service_ms=ToolTimes(all=self.tool.figure(), by_tool=_each(self.tool_by_name)),
            gap_ms=Gaps(
                within_turns=self.gaps.figure(),
                by_transition=_each(self.gaps_by_transition),
                between_turns=self.between_turns.figure(),
                overlapped_transitions=self.overlapped,
            ),
            session_span_ms=SpanFigure(**self.spans.figure().model_dump(), note=note),
        )


def _each(distributions: dict[str, Distribution]) -> dict[str, DistributionFigure]:
    """Each named distribution's figures, sorted by name."""
    return {name: distributions[name].figure() for name in sorted(distributions)}
