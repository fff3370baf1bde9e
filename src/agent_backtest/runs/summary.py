"""``summary.json``: a scored run's agreement, overall and by group, each with its interval.

Only scored records enter a mean. Unscored records and infrastructure errors are counted beside
it, never as zeros. Every rate is a :class:`MeanEstimate` clustered by session.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from agent_backtest.runs.documents import DocumentPart
from agent_backtest.runs.estimate import MeanEstimate
from agent_backtest.runs.manifest import RunStatus
from agent_backtest.units import AgentConfig

SUMMARY_SCHEMA = "abt.summary/2"
NOT_RECORDED = "(not recorded)"


class Counts(DocumentPart):
    """How many answers the run holds, and what became of them."""

    records: int = Field(description="Score records: one per (unit, repeat).")
    scored: int = Field(description="Records with a score; only these enter the means.")
    unscored: int = Field(description="Records the judge could not score (not zeros).")
    infra_errors: int = Field(description="Records whose call gave no answer (not scored).")
    infra_errors_by_kind: dict[str, int] = Field(
        description="Infrastructure errors by kind (timeout, http_429, …)."
    )
    units: int = Field(description="Distinct units scored.")
    sessions: int = Field(description="Distinct sessions those units come from.")


class GroupFigures(DocumentPart):
    """Agreement of a set of scored answers (the run, or one group of it)."""

    agreement: MeanEstimate = Field(description="Mean lenient score in [0, 1].")
    strict: MeanEstimate = Field(
        description="Share of answers with the same tool and every argument exact, or the same "
        "text."
    )
    buckets: dict[str, int] = Field(description="Answers by bucket.")


class RepeatFigures(DocumentPart):
    """With k ≥ 2 repeats: how consistent a unit's answers are."""

    k: int = Field(description="The most repeats of any unit.")
    consistency: MeanEstimate = Field(
        description="Share of pairs of a unit's answered repeats with the same normalised answer."
    )
    pass_all_repeats_strict: MeanEstimate = Field(
        description="Share of units whose every repeat is a strict match (pass^k)."
    )


class ScoringSettings(DocumentPart):
    """What decided the scores; its hash is the scoring id."""

    scorer: str = Field(description="Scorer name and version.")
    judge: str | None = Field(description="The judge model; None: text by token overlap.")
    fallback_judge: str | None = Field(description="Asked when the judge's verdict is invalid.")
    judge_repeats: int = Field(description="Times the judge was asked per item.")
    exact_strings: bool = Field(description="String arguments compared without normalisation.")
    agent: AgentConfig = Field(description="The agent config used to classify and match.")
    scoring_id: str = Field(description="Short hash of these settings.")


class RunFacts(DocumentPart):
    """The run that was scored, as its manifest said when it was scored."""

    model: str | None = Field(description="The candidate provider/model.")
    k: int | None = Field(description="Repeats per unit.")
    status: RunStatus = Field(description="The run's status.")
    units: int = Field(description="Units the run selected.")
    partial: bool = Field(
        description="The run was interrupted: the figures cover only the answers that arrived."
    )


class Summary(DocumentPart):
    """A scored run's aggregates."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["abt.summary/2"] = Field(default=SUMMARY_SCHEMA, alias="schema")
    scoring: ScoringSettings = Field(description="The scoring settings.")
    run: RunFacts = Field(description="The run that was scored.")
    labels: dict[str, str] = Field(description="The run's labels (--label KEY=VALUE).")
    warnings: list[str] = Field(description="What qualifies these numbers, from scoring.")
    counts: Counts = Field(description="Answers and what became of them.")
    infra_error_rate: MeanEstimate = Field(
        description="Share of answers that ended in an infrastructure error."
    )
    overall: GroupFigures = Field(description="Agreement over every scored answer.")
    buckets: dict[str, int] = Field(description="Every answer by bucket.")
    methods: dict[str, int] = Field(
        description="Scored answers by method (matcher, judge, text_similarity)."
    )
    by_kind: dict[str, GroupFigures] = Field(description="Agreement by unit kind.")
    by_node: dict[str, GroupFigures] = Field(description="Agreement by the step's node.")
    by_tool: dict[str, GroupFigures] = Field(description="Agreement by production's tool.")
    by_split: dict[str, GroupFigures] = Field(description="Agreement by split (val, test).")
    by_model: dict[str, GroupFigures] = Field(description="Agreement by candidate model.")
    by_agent_version: dict[str, GroupFigures] = Field(
        description=f"Agreement by the agent version that served the step; {NOT_RECORDED} when "
        "the trace did not say."
    )
    topic_agreement: MeanEstimate = Field(
        description="Router units: share whose routing target agrees with production's."
    )
    repeats: RepeatFigures | None = Field(description="Consistency of repeats; None when k = 1.")
