"""``summary.json``: a scored run's agreement, overall and by group, each with its interval.

Only decided answers enter agreement. Answers no judge decided, answers the judge could not score
and infrastructure errors are counted beside it, never as zeros, and every headline says how
much of the run it covers. Every rate is a :class:`MeanEstimate` clustered by session.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from agent_backtest.record_model import TaggedRecord, schema_tag
from agent_backtest.runs.documents import DocumentPart
from agent_backtest.runs.estimate import MeanEstimate
from agent_backtest.runs.manifest import RunStatus
from agent_backtest.runs.spending import RoleSpend
from agent_backtest.units import AgentConfig

SUMMARY_SCHEMA = "abt.summary/3"
NOT_RECORDED = "(not recorded)"


class Counts(DocumentPart):
    """How many answers the run holds, and what became of them."""

    records: int = Field(description="Score records: one per (unit, repeat).")
    decided: int = Field(
        description="Answers decided by the matcher, the judge or exact text equality; only "
        "these enter agreement."
    )
    no_judge: int = Field(
        description="Answers only a judge could decide, scored without one (text_similarity "
        "only; not in agreement)."
    )
    unscored: int = Field(
        description="Answers the judge answered without a valid verdict (not zeros)."
    )
    infra_errors: int = Field(description="Answers whose candidate call gave none (not scored).")
    infra_errors_by_kind: dict[str, int] = Field(
        description="The candidate's infrastructure errors by kind (timeout, http_429, …)."
    )
    judge_errors: int = Field(
        default=0,
        description="Answers left undecided because the judge's calls failed (not scored); "
        "written only when there are some.",
    )
    judge_errors_by_kind: dict[str, int] = Field(
        default_factory=dict,
        description="The judge's infrastructure errors by kind (judge_http_5xx, judge_timeout, "
        "…); written only when there are some.",
    )
    units: int = Field(description="Distinct units scored.")
    sessions: int = Field(description="Distinct sessions those units come from.")

    @model_serializer(mode="wrap")
    def _without_judge_errors_when_none(self, write: SerializerFunctionWrapHandler) -> Any:
        """Leave the judge-error counts out when they are zero, so the summary of a run whose
        judge never failed reads as it did before they were counted."""
        data = write(self)
        if not self.judge_errors and isinstance(data, dict):
            data.pop("judge_errors", None)
            data.pop("judge_errors_by_kind", None)
        return data

    def coverage(self) -> str:
        """What the headline covers: ``decided 621 of 1,381 (text not judged: 760; …)``."""
        judge = f"; judge errors: {self.judge_errors:,}" if self.judge_errors else ""
        return (
            f"decided {self.decided:,} of {self.records:,} (text not judged: {self.no_judge:,}; "
            f"unscored: {self.unscored:,}; infrastructure errors: {self.infra_errors:,}{judge})"
        )

    @property
    def infrastructure_undecided(self) -> int:
        """Answers undecided because a call failed, the candidate's or the judge's."""
        return self.infra_errors + self.judge_errors

    @property
    def infrastructure_kinds(self) -> dict[str, int]:
        """The candidate's infrastructure errors by kind, then the judge's (whose kinds start
        with ``judge_``), each by label."""
        return {**self.infra_errors_by_kind, **self.judge_errors_by_kind}

    @property
    def decided_share(self) -> float | None:
        """The share of answers decided; None for a run without answers."""
        return self.decided / self.records if self.records else None


class GroupFigures(DocumentPart):
    """Agreement of a set of decided answers (the run, or one group of it)."""

    agreement: MeanEstimate = Field(description="Mean lenient score in [0, 1].")
    strict: MeanEstimate = Field(
        description="Share of answers with the same tool and every argument exact, or the same "
        "text."
    )
    buckets: dict[str, int] = Field(description="Answers by bucket.")


class UndecidedBounds(DocumentPart):
    """Where agreement over every answer lies, whatever the undecided answers would have
    scored: each figure with them all wrong (the low end) and all right (the high end)."""

    undecided: int = Field(
        description="Answers not decided: text not judged, unscored, and infrastructure errors "
        "of the candidate or the judge."
    )
    agreement: tuple[float, float] = Field(
        description="[all wrong, all right]: the mean lenient score over every answer."
    )
    strict: tuple[float, float] = Field(
        description="[all wrong, all right]: the share of strict matches over every answer."
    )

    @classmethod
    def of(cls, counts: Counts, overall: GroupFigures) -> UndecidedBounds | None:
        """The bounds of a run's figures; None when every answer was decided (or none was)."""
        undecided = counts.records - counts.decided
        if not undecided or not counts.decided:
            return None
        return cls(
            undecided=undecided,
            agreement=_either_way(overall.agreement, counts.records),
            strict=_either_way(overall.strict, counts.records),
        )

    def text(self, records: int) -> str:
        """``over all 60 answers, the 31 undecided counted all wrong or all right: exact
        0.300–0.814 · agreement 0.400–0.914``."""
        return (
            f"over all {records:,} answers, the {self.undecided:,} undecided counted all wrong or "
            f"all right: exact {self.strict[0]:.3f}–{self.strict[1]:.3f} · agreement "
            f"{self.agreement[0]:.3f}–{self.agreement[1]:.3f}"
        )


def _either_way(decided: MeanEstimate, records: int) -> tuple[float, float]:
    """A decided-only mean as the mean over ``records`` answers with the others all 0, all 1."""
    total = (decided.mean or 0.0) * decided.n
    undecided = records - decided.n
    return round(total / records, 6), round((total + undecided) / records, 6)


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


class Summary(TaggedRecord):
    """A scored run's aggregates."""

    schema_: Literal["abt.summary/3"] = schema_tag(SUMMARY_SCHEMA)
    scoring: ScoringSettings = Field(description="The scoring settings.")
    run: RunFacts = Field(description="The run that was scored.")
    labels: dict[str, str] = Field(description="The run's labels (--label KEY=VALUE).")
    warnings: list[str] = Field(description="What qualifies these numbers, from scoring.")
    counts: Counts = Field(description="Answers and what became of them.")
    infra_error_rate: MeanEstimate = Field(
        description="Share of answers that ended in an infrastructure error."
    )
    overall: GroupFigures = Field(description="Agreement over every decided answer.")
    text_similarity: MeanEstimate = Field(
        description="Mean token-overlap similarity of the answers no judge decided: a figure of "
        "its own, never a verdict and never part of agreement."
    )
    buckets: dict[str, int] = Field(description="Every answer by bucket.")
    methods: dict[str, int] = Field(
        description="Decided answers by what decided them (matcher, judge, exact_text)."
    )
    suspected_injection: int = Field(
        description="Answers whose text seems aimed at the judge (see each score record)."
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
    undecided_bounds: UndecidedBounds | None = Field(
        default=None,
        description="Agreement and strict agreement over every answer, with the undecided ones "
        "counted all wrong and all right: the range the whole run's figures lie in whatever "
        "those would have scored. Written only when some answers, not all, are undecided.",
    )
    spent: dict[str, RoleSpend] = Field(
        default_factory=dict,
        description="What the run spent by role (candidate, judge, fallback_judge), from the "
        "token counts its answers reported, over every start and scoring of the run.",
    )

    @model_serializer(mode="wrap")
    def _without_bounds_when_none(self, write: SerializerFunctionWrapHandler) -> Any:
        """Leave the bounds out when there are none, so the summary of a run whose every answer
        was decided reads as it did before they were written."""
        data = write(self)
        if self.undecided_bounds is None and isinstance(data, dict):
            data.pop("undecided_bounds", None)
        return data
