"""Counting calls: LLM calls by model and status, tool calls by name and status, per turn/session.

Every LLM step is one model round trip and every tool step one tool call; counts are always
available (a step is either there or not). Status: ``success`` when the step recorded ``ok``,
``failed`` when it recorded an error, ``timeout_or_unknown`` for timeouts (whose effect is unknown)
and for steps that recorded no status.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from agent_backtest.profiling.availability import missing_reason
from agent_backtest.profiling.distribution import Distribution
from agent_backtest.profiling.facts import OUTCOMES, Outcome
from agent_backtest.runs.profile import (
    Calls,
    CallsByKind,
    LLMCalls,
    ParallelCalls,
    RepeatedCalls,
    StatusCounts,
    ToolCalls,
)


class CallCounts:
    """Calls of a group: totals, by model / tool / status, and per turn and per session."""

    def __init__(self) -> None:
        self.llm_by_model: Counter[str] = Counter()
        self.llm_by_status: Counter[str] = Counter()
        self.tool_by_name: Counter[str] = Counter()
        self.tool_by_status: Counter[str] = Counter()
        self.tool_status_by_name: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.no_status = Counter({"llm": 0, "tool": 0})
        self.per_turn = {kind: Distribution("turns", integral=True) for kind in ("llm", "tool")}
        self.per_session = {
            kind: Distribution("sessions", integral=True) for kind in ("llm", "tool")
        }

    def add_llm(self, model: str, status: Outcome, recorded_status: bool) -> None:
        """One LLM call."""
        self.llm_by_model[model] += 1
        self.llm_by_status[status] += 1
        self.no_status["llm"] += not recorded_status

    def add_tool(self, name: str, status: Outcome, recorded_status: bool) -> None:
        """One tool call."""
        self.tool_by_name[name] += 1
        self.tool_by_status[status] += 1
        self.tool_status_by_name[name][status] += 1
        self.no_status["tool"] += not recorded_status

    def end_turn(self, llm: int, tool: int) -> None:
        """A finished turn's number of LLM and tool calls."""
        self.per_turn["llm"].add(llm)
        self.per_turn["tool"].add(tool)

    def end_session(self, llm: int, tool: int) -> None:
        """A finished session's number of LLM and tool calls."""
        self.per_session["llm"].add(llm)
        self.per_session["tool"].add(tool)

    def figures(self, parallel: ParallelCalls, repeated: RepeatedCalls) -> Calls:
        """LLM and tool call counts (with the tool calls' parallelism and repetition), and
        calls per turn and per session as distributions."""
        return Calls(
            llm=LLMCalls(
                total=sum(self.llm_by_model.values()),
                by_model=dict(sorted(self.llm_by_model.items())),
                by_status=_statuses(self.llm_by_status),
                status_note=missing_reason(
                    Counter({"record no status": self.no_status["llm"]}),
                    self.llm_by_model.total(),
                    "LLM calls",
                ),
            ),
            tool=ToolCalls(
                total=sum(self.tool_by_name.values()),
                by_tool=dict(sorted(self.tool_by_name.items())),
                by_status=_statuses(self.tool_by_status),
                by_tool_status={
                    name: _statuses(self.tool_status_by_name[name])
                    for name in sorted(self.tool_status_by_name)
                },
                status_note=missing_reason(
                    Counter({"record no status": self.no_status["tool"]}),
                    self.tool_by_name.total(),
                    "tool calls",
                ),
                parallel=parallel,
                repeated=repeated,
            ),
            per_turn=CallsByKind(
                llm=self.per_turn["llm"].figure(), tool=self.per_turn["tool"].figure()
            ),
            per_session=CallsByKind(
                llm=self.per_session["llm"].figure(), tool=self.per_session["tool"].figure()
            ),
        )


def _statuses(counts: Counter[str]) -> StatusCounts:
    """Every status with its count, zeros included, so groups line up."""
    return StatusCounts(**{status: counts[status] for status in OUTCOMES})
