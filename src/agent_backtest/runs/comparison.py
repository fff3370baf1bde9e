"""``compare.json``: two scored runs paired by ``(unit_id, repeat)``, and what changed.

Only answers scored in both runs enter a paired figure; the rest are counted and listed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agent_backtest.record_model import TaggedRecord, schema_tag
from agent_backtest.runs.documents import DocumentPart
from agent_backtest.runs.estimate import MeanEstimate
from agent_backtest.runs.summary import UndecidedBounds

COMPARISON_SCHEMA = "abt.compare/3"


class ComparedRun(DocumentPart):
    """One side of the comparison: what the run is, and its own headline figures."""

    run: str = Field(description="The run directory, as given.")
    name: str = Field(description="The run directory's name.")
    model: str | None = Field(description="The candidate provider/model.")
    patch: str | None = Field(description="The patch file the run applied; None: unpatched.")
    k: int | None = Field(description="Repeats per unit.")
    judge: str | None = Field(description="The judge that scored it; None: no judge.")
    scoring_id: str = Field(description="Hash of the scoring settings.")
    labels: dict[str, str] = Field(description="The run's labels (--label KEY=VALUE).")
    records: int = Field(description="The run's score records.")
    agreement: MeanEstimate = Field(description="Agreement over all the run's scored answers.")
    strict: MeanEstimate = Field(description="Strict agreement over the same answers.")
    topic_agreement: MeanEstimate = Field(
        description="Router (topic) agreement over all the run's scored router answers."
    )
    undecided_bounds: UndecidedBounds | None = Field(
        default=None,
        description="Where the run's figures over every answer lie, its undecided answers "
        "counted all wrong or all right; None when every answer was decided.",
    )


class Counts(DocumentPart):
    """How the answers of the two runs paired up."""

    paired: int = Field(description="(unit, repeat) pairs scored in both runs.")
    sessions: int = Field(description="Sessions of the paired answers.")
    only_in_a: int = Field(description="Answers only run A has.")
    only_in_b: int = Field(description="Answers only run B has.")
    not_comparable: int = Field(
        description="Pairs one side did not decide (an infrastructure error, unscored, or text "
        "not judged)."
    )


class PairedRates(DocumentPart):
    """A rate of each side over the same paired answers, and the paired difference."""

    a: MeanEstimate = Field(description="A's rate over the paired answers.")
    b: MeanEstimate = Field(description="B's rate over the same answers.")
    difference: MeanEstimate = Field(
        description="Mean of B − A per pair, its interval accounting for sessions (MOVER on "
        "each side's Korn–Graubard limits)."
    )
    p_value: float | None = Field(
        description="Two-sided p-value of no change, from the test that inverts that interval "
        "(p < 0.05 exactly when the interval excludes 0); None with fewer than two sessions."
    )


class McNemar(DocumentPart):
    """Strict agreement of the paired answers as a 2×2 table, and McNemar's exact test.

    The test takes every pair as independent; the clustered p-value of ``strict`` is the one to
    read when sessions hold several steps.
    """

    a_right_b_wrong: int = Field(description="Strict in A, not in B.")
    a_wrong_b_right: int = Field(description="Strict in B, not in A.")
    both_right: int = Field(description="Strict in both.")
    both_wrong: int = Field(description="Strict in neither.")
    p_value: float = Field(description="Two-sided exact p-value on the discordant pairs.")
    test: str = Field(description="The test, in words.")


class AnswerKey(DocumentPart):
    """The identity of one answer."""

    unit_id: str = Field(description="The unit.")
    repeat: int = Field(description="The repeat.")
    session_id: str = Field(description="The unit's session.")


class Flip(AnswerKey):
    """A paired answer whose strict agreement changed."""

    node: str | None = Field(description="The step's node.")
    golden_tool: str | None = Field(description="Production's tool; None for a text answer.")
    bucket_a: str | None = Field(description="A's bucket.")
    bucket_b: str | None = Field(description="B's bucket.")
    candidate_tool_a: str | None = Field(description="The tool A's candidate called.")
    candidate_tool_b: str | None = Field(description="The tool B's candidate called.")


class Flips(DocumentPart):
    """The answers whose strict agreement changed, in each direction."""

    a_right_b_wrong: list[Flip] = Field(description="Strict in A, not in B.")
    a_wrong_b_right: list[Flip] = Field(description="Strict in B, not in A.")


class GroupChange(PairedRates):
    """The agreement change of one group (a node, a tool) over its paired answers."""

    label: str = Field(description="The group.")
    n: int = Field(description="Its paired answers.")


class NotComparable(AnswerKey):
    """A pair one side could not score."""

    status_a: str = Field(description="A's status (scored, unscored, infra_error).")
    status_b: str = Field(description="B's status.")
    error_a: str | None = Field(description="A's infrastructure error kind.")
    error_b: str | None = Field(description="B's infrastructure error kind.")


class Missing(DocumentPart):
    """Every answer left out of the paired figures."""

    only_in_a: list[AnswerKey] = Field(description="Answers only run A has.")
    only_in_b: list[AnswerKey] = Field(description="Answers only run B has.")
    not_comparable: list[NotComparable] = Field(description="Pairs one side could not score.")


class Comparison(TaggedRecord):
    """Run B against run A (the baseline), answer by answer."""

    schema_: Literal["abt.compare/3"] = schema_tag(COMPARISON_SCHEMA)
    a: ComparedRun = Field(description="The baseline run.")
    b: ComparedRun = Field(description="The run compared with it.")
    counts: Counts = Field(description="How the answers paired up.")
    agreement: PairedRates = Field(description="Agreement over the paired answers.")
    strict: PairedRates = Field(description="Strict agreement over the paired answers.")
    topic_agreement: PairedRates = Field(
        description="Router (topic) agreement over the paired router answers."
    )
    mcnemar: McNemar = Field(description="McNemar's exact test on strict agreement (unclustered).")
    flips: Flips = Field(description="Answers whose strict agreement changed.")
    by_node: list[GroupChange] = Field(description="Agreement change by node, largest first.")
    by_tool: list[GroupChange] = Field(
        description="Agreement change by production's tool, largest first."
    )
    missing: Missing = Field(description="Answers left out, listed.")
    warnings: list[str] = Field(description="What could make the difference mean something else.")
