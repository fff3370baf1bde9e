"""The profile: sessions read one at a time into per-group figures, then assembled as a record.

Nothing of a session is kept once it has been added: each group holds counters and, for the
percentiles, one float per measured value (a call's time, a gap, a span). Memory grows with the
number of timed calls and with the number of distinct groups, tools and models, not with the
size of the messages.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from agent_backtest.profiling.calls import CallCounts
from agent_backtest.profiling.cases import RunAnnotation
from agent_backtest.profiling.facts import arguments_key, model_of, outcome, tool_name_of
from agent_backtest.profiling.failures import FailureTally
from agent_backtest.profiling.groups import SessionFacts, Variant, group_key
from agent_backtest.profiling.parallel import Interval, Parallel
from agent_backtest.profiling.repeats import Repeats, SessionRepeats
from agent_backtest.profiling.run_figures import RunFigures
from agent_backtest.profiling.timing import StepTime, Timing, step_time
from agent_backtest.profiling.tokens import PriceTable, TokenTally
from agent_backtest.profiling.variants import comparison
from agent_backtest.runs.profile import (
    AnnotationsRead,
    GroupBy,
    InputRead,
    Profile,
    ProfileGroup,
)
from agent_backtest.trace import Session, Step


class GroupProfile:
    """Every figure of one group, accumulated session by session."""

    def __init__(self) -> None:
        self.sessions = 0
        self.turns = 0
        self.calls = CallCounts()
        self.parallel = Parallel()
        self.repeats = Repeats()
        self.timing = Timing()
        self.tokens = TokenTally()
        self.failures = FailureTally()
        self.runs = RunFigures()

    def add(self, session: Session, annotation: RunAnnotation | None) -> None:
        """Add one session."""
        self.sessions += 1
        self.runs.add(annotation)
        repeats = SessionRepeats()
        times: list[StepTime] = []
        llm_total = tool_total = 0
        for turn in session.turns:
            self.turns += 1
            tool_steps = []
            llm_in_turn = 0
            for step in turn.steps:
                time = step_time(step, turn.index)
                times.append(time)
                if step.kind == "llm":
                    self._llm(step, time)
                    llm_in_turn += 1
                elif step.kind == "tool":
                    self._tool(step, time, repeats)
                    tool_steps.append(step)
            self.calls.end_turn(llm_in_turn, len(tool_steps))
            self.failures.add_turn(tool_steps)
            llm_total, tool_total = llm_total + llm_in_turn, tool_total + len(tool_steps)
        self._parallel(times)
        self.repeats.end_session(repeats)
        self.calls.end_session(llm_total, tool_total)
        self.timing.add_session(times)

    def _parallel(self, times: list[StepTime]) -> None:
        """Overlaps among the session's tool calls that have valid times."""
        tools = [time for time in times if time.kind == "tool"]
        intervals: list[Interval] = [
            (t.start, t.end)
            for t in tools
            if t.start is not None and t.end is not None and t.end >= t.start
        ]
        self.parallel.add_session(intervals, len(tools) - len(intervals))

    def _llm(self, step: Step, time: StepTime) -> None:
        """Count, time, tokens and failures of one LLM call."""
        model = model_of(step)
        self.calls.add_llm(model, outcome(step), step.status is not None)
        self.timing.add_call(step, time)
        self.tokens.add(model, step)
        self.failures.add_llm(step)
        answer = step.llm.response if step.llm is not None else None
        if answer is not None:
            self.parallel.add_request(len(answer.message.tool_calls or ()))

    def _tool(self, step: Step, time: StepTime, repeats: SessionRepeats) -> None:
        """Count, time and repetition of one tool call."""
        name = tool_name_of(step)
        self.calls.add_tool(name, outcome(step), step.status is not None)
        self.timing.add_call(step, time)
        self.repeats.add(name, repeats.call(name, arguments_key(step)))

    def figures(self, prices: PriceTable | None) -> ProfileGroup:
        """The group's figures."""
        return ProfileGroup(
            sessions=self.sessions,
            turns=self.turns,
            calls=self.calls.figures(self.parallel.figures(), self.repeats.figures()),
            time=self.timing.figures(),
            tokens=self.tokens.figures(prices),
            failures=self.failures.figures(),
            runs=self.runs.figures() if self.runs.sessions_annotated else None,
        )


@dataclass
class Profiler:
    """Adds sessions to their groups; :meth:`result` assembles the profile."""

    group_by: GroupBy
    variants: Sequence[Variant] = ()
    annotations: dict[str, RunAnnotation] = field(default_factory=dict)
    prices: PriceTable | None = None
    groups: dict[str, GroupProfile] = field(default_factory=dict)
    ungrouped: int = 0
    annotated_seen: set[str] = field(default_factory=set)
    steps: Counter[str] = field(default_factory=Counter)

    def add(self, session: Session, file: str, format: str) -> None:
        """Add one session read from ``file`` (in ``format``) to its group."""
        annotation = self.annotations.get(session.id)
        if annotation is not None:
            self.annotated_seen.add(session.id)
        facts = SessionFacts(session, file, format, annotation)
        key = group_key(self.group_by, facts, self.variants)
        if key is None:
            self.ungrouped += 1
            return
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = GroupProfile()
        group.add(session, annotation)
        self.steps.update(step.kind for step in session.steps())

    def result(self, inputs: Sequence[InputRead]) -> Profile:
        """The whole profile."""
        groups = {name: self.groups[name].figures(self.prices) for name in sorted(self.groups)}
        order = [v.name for v in self.variants] or sorted(groups)
        return Profile(
            group_by=self.group_by,
            inputs=list(inputs),
            steps_profiled=dict(sorted(self.steps.items())),
            groups=groups,
            sessions_in_no_group=self.ungrouped,
            comparison=comparison(groups, order) if self.group_by == "variant" else None,
            annotations=self._annotations_read() if self.annotations else None,
        )

    def _annotations_read(self) -> AnnotationsRead:
        """How many annotated sessions were found in the input."""
        absent = sorted(set(self.annotations) - self.annotated_seen)
        return AnnotationsRead(
            sessions_annotated=len(self.annotations),
            annotated_sessions_not_in_input=len(absent),
            examples_not_in_input=absent[:5],
        )
