"""``profile.json``: where agent loops spend their calls and time, per group, from their traces.

A figure the traces did not record is missing, never zero: a total over partly missing values is
None, with the observed total and the reason beside it. Times are in milliseconds.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agent_backtest.record_model import TaggedRecord, schema_tag
from agent_backtest.runs.documents import DocumentPart

PROFILE_SCHEMA = "abt.profile/2"
GroupBy = Literal["session", "agent", "model", "variant"]
Number = int | float


class Availability(DocumentPart):
    """Whether a figure is available and, when it is not, why."""

    available: bool = Field(description="False when any item lacks its value, or there is none.")
    reason: str | None = Field(
        description='Why not, in words: "12 of 40 tool calls have no end time".'
    )


class TallyFigure(Availability):
    """A sum over items, each of which has a value or a reason why it has none."""

    count: int = Field(description="Items with a value.")
    missing: int = Field(description="Items without one.")
    total: Number | None = Field(description="The sum; None when any item lacks its value.")
    observed_total: Number = Field(description="The sum of the values that were observed.")


class DistributionFigure(TallyFigure):
    """A tally with its nearest-rank percentiles (each one an observed value)."""

    p50: Number | None = Field(description="Nearest-rank median of the observed values.")
    p95: Number | None = Field(description="Nearest-rank 95th percentile of the observed values.")
    max: Number | None = Field(description="The largest observed value.")


class SpanFigure(DistributionFigure):
    """Session spans, from the earliest start to the latest end of any step."""

    note: str | None = Field(
        default=None, description="Sessions with untimed steps, whose span covers the timed ones."
    )


class StatusCounts(DocumentPart):
    """Calls by outcome; every outcome listed, zeros included, so groups line up."""

    success: int = Field(description="Calls that recorded success.")
    failed: int = Field(description="Calls that recorded an error.")
    timeout_or_unknown: int = Field(
        description="Calls that timed out or recorded no status: their effect is unknown."
    )


class LLMCalls(DocumentPart):
    """A group's LLM calls."""

    total: int = Field(description="LLM calls.")
    by_model: dict[str, int] = Field(description="LLM calls by the model that answered.")
    by_status: StatusCounts = Field(description="LLM calls by outcome.")
    status_note: str | None = Field(description="Calls that recorded no status, when any.")


class RequestedTogether(DocumentPart):
    """Tool calls a model asked for in one answer."""

    answers: int = Field(description="Answers that asked for two tool calls or more.")
    calls: int = Field(description="Tool calls those answers asked for.")


class ParallelCalls(DocumentPart):
    """Tool calls that ran at the same time."""

    overlapping_calls: TallyFigure = Field(
        description="Tool calls whose time overlaps another call's."
    )
    batches: TallyFigure = Field(description="Runs of calls chained by overlaps, two or more.")
    max_in_flight: int | None = Field(description="The most calls running at one instant.")
    requested_together: RequestedTogether = Field(description="Calls asked for together.")


class RepeatedCalls(DocumentPart):
    """Tool calls made again with the same arguments."""

    retries: TallyFigure = Field(description="Calls identical to the session's previous call.")
    retries_by_tool: dict[str, int] = Field(description="Retries by tool (non-zero only).")
    repeats: TallyFigure = Field(description="Calls identical to any earlier call of the session.")
    repeats_by_tool: dict[str, int] = Field(description="Repeats by tool (non-zero only).")
    sessions_with_retries: int = Field(description="Sessions with at least one retry.")
    longest_run_of_identical_calls: int = Field(description="The longest run of identical calls.")


class ToolCalls(DocumentPart):
    """A group's tool calls."""

    total: int = Field(description="Tool calls.")
    by_tool: dict[str, int] = Field(description="Tool calls by tool.")
    by_status: StatusCounts = Field(description="Tool calls by outcome.")
    by_tool_status: dict[str, StatusCounts] = Field(description="Outcomes by tool.")
    status_note: str | None = Field(description="Calls that recorded no status, when any.")
    parallel: ParallelCalls = Field(description="Calls that ran at the same time.")
    repeated: RepeatedCalls = Field(description="Retries and repeats.")


class CallsByKind(DocumentPart):
    """A distribution of LLM calls and one of tool calls."""

    llm: DistributionFigure = Field(description="LLM calls.")
    tool: DistributionFigure = Field(description="Tool calls.")


class Calls(DocumentPart):
    """A group's calls: LLM and tool, and how many per turn and per session."""

    llm: LLMCalls = Field(description="LLM calls.")
    tool: ToolCalls = Field(description="Tool calls.")
    per_turn: CallsByKind = Field(description="Calls per turn.")
    per_session: CallsByKind = Field(description="Calls per session.")


class LLMTimes(DocumentPart):
    """Service time of LLM calls (ms)."""

    all: DistributionFigure = Field(description="Every LLM call.")
    by_model: dict[str, DistributionFigure] = Field(description="By the model that answered.")


class ToolTimes(DocumentPart):
    """Service time of tool calls (ms)."""

    all: DistributionFigure = Field(description="Every tool call.")
    by_tool: dict[str, DistributionFigure] = Field(description="By tool.")


class Gaps(DocumentPart):
    """Time between calls, spent outside the model and the tools (ms)."""

    within_turns: DistributionFigure = Field(description="Gaps between calls of one turn.")
    by_transition: dict[str, DistributionFigure] = Field(
        description="Gaps within turns by transition (llm_to_tool, tool_to_llm, …)."
    )
    between_turns: DistributionFigure = Field(
        description="Gaps across turns (they include the user's own time)."
    )
    overlapped_transitions: int = Field(
        description="Calls that started before the earlier calls ended: no gap."
    )


class Times(DocumentPart):
    """Where a group's time goes."""

    llm_service_ms: LLMTimes = Field(description="LLM service time.")
    tool_service_ms: ToolTimes = Field(description="Tool service time.")
    gap_ms: Gaps = Field(description="Gaps between calls.")
    session_span_ms: SpanFigure = Field(description="Session spans.")


class ModelTokens(DocumentPart):
    """One model's token counts."""

    input: TallyFigure = Field(description="Input tokens.")
    output: TallyFigure = Field(description="Output tokens.")


class CostFigure(Availability):
    """A cost in the price table's currency; None when token counts or a price are missing."""

    total: float | None = Field(default=None, description="The cost; None when incomplete.")
    observed_total: float | None = Field(
        default=None, description="The cost of the tokens observed; None without a price."
    )


class Cost(CostFigure):
    """A group's cost over all models, and by model."""

    by_model: dict[str, CostFigure] = Field(
        default_factory=dict, description="Cost by model (empty without a price table)."
    )


class Tokens(DocumentPart):
    """A group's tokens and their cost."""

    by_model: dict[str, ModelTokens] = Field(description="Tokens by the model that answered.")
    cost: Cost = Field(description="Their cost, with --prices.")


class FollowUps(DocumentPart):
    """What the agent did after failed tool calls."""

    retry_same_tool: int = Field(description="Called the same tool next.")
    other_tool: int = Field(description="Called another tool next.")
    end_of_turn: int = Field(description="Called no tool after it in the turn.")


class Failures(Availability):
    """Error kinds, and what followed each failed tool call."""

    tool_error_kinds: dict[str, dict[str, int]] = Field(description="Error kinds by tool.")
    llm_error_kinds: dict[str, dict[str, int]] = Field(description="Error kinds by model.")
    tool_failures_followed_by: FollowUps = Field(description="What followed failed tool calls.")
    tool_failures_followed_by_tool: dict[str, FollowUps] = Field(
        description="What followed, by the failed tool."
    )


class RepairTurns(DocumentPart):
    """Turns the annotated runs spent repairing the agent's own mistakes."""

    total: TallyFigure = Field(description="Repair turns.")
    by_reason: dict[str, int] = Field(description="Repair turns by reason.")


class AnnotatedRuns(DocumentPart):
    """The annotated runs of a group (``--annotations``); each run counts once."""

    runs: int = Field(description="Annotated runs with a session in the group.")
    sessions_annotated: int = Field(description="Sessions of the group with an annotation.")
    sessions_not_annotated: int = Field(description="Sessions of the group without one.")
    cases: list[str] = Field(description="Cases the runs ran.")
    variants: list[str] = Field(description="Variants the runs name.")
    base_revisions: list[str] = Field(description="Base revisions the runs ran on.")
    repair_turns: RepairTurns = Field(description="Repair turns.")
    task_time_ms: DistributionFigure = Field(description="Task time per run, from its timing.")
    task_verdicts: dict[str, int] = Field(description="Runs by task verdict.")
    validation_verdicts: dict[str, int] = Field(description="Runs by validation verdict.")


class ProfileGroup(DocumentPart):
    """Every figure of one group."""

    sessions: int = Field(description="Sessions in the group.")
    turns: int = Field(description="Their turns.")
    calls: Calls = Field(description="Calls.")
    time: Times = Field(description="Times (ms).")
    tokens: Tokens = Field(description="Tokens and cost.")
    failures: Failures = Field(description="Failures.")
    runs: AnnotatedRuns | None = Field(
        default=None, description="The annotated runs; None when no session has an annotation."
    )


class InputRead(DocumentPart):
    """What was read from one input."""

    file: str = Field(description="The input file.")
    format: str = Field(description="Its format.")
    sessions: int = Field(description="Sessions read.")
    duplicate_sessions: int = Field(description="Sessions read twice, counted once.")
    steps: dict[str, int] = Field(description="Steps by kind.")
    skips: dict[str, int] = Field(description="Records skipped, by reason.")


class FigureChange(DocumentPart):
    """One figure of a variant against the baseline."""

    baseline: Number | None = Field(description="The baseline's value.")
    value: Number | None = Field(description="The variant's value.")
    difference: Number | None = Field(
        description="value − baseline; None when either is unknown (never made up from zero)."
    )


class VariantComparison(DocumentPart):
    """Every group after the first compared with the first (the baseline)."""

    baseline: str | None = Field(description="The baseline group.")
    order: list[str] = Field(description="The groups holding sessions, baseline first.")
    variants: dict[str, dict[str, FigureChange]] = Field(
        description="Per variant, each figure by JSON pointer (/calls/tool/total)."
    )
    note: str | None = Field(default=None, description="Why nothing is compared, when nothing is.")


class AnnotationsRead(DocumentPart):
    """How many annotated sessions the inputs held."""

    sessions_annotated: int = Field(description="Sessions the annotations name.")
    annotated_sessions_not_in_input: int = Field(description="Of those, sessions not read.")
    examples_not_in_input: list[str] = Field(description="The first few of them.")


class Profile(TaggedRecord):
    """A profile of agent loops, per group."""

    schema_: Literal["abt.profile/2"] = schema_tag(PROFILE_SCHEMA)
    group_by: GroupBy = Field(description="What sessions are grouped by.")
    inputs: list[InputRead] = Field(description="What was read from each input.")
    steps_profiled: dict[str, int] = Field(description="Steps of the grouped sessions, by kind.")
    groups: dict[str, ProfileGroup] = Field(description="Each group's figures, by name.")
    sessions_in_no_group: int = Field(description="Sessions that match no variant.")
    comparison: VariantComparison | None = Field(
        default=None, description="Variants against the baseline (--group-by variant)."
    )
    annotations: AnnotationsRead | None = Field(
        default=None, description="How the annotations matched the input (--annotations)."
    )
