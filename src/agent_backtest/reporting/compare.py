"""``compare.json``: two scored runs paired by ``(unit_id, repeat)``, and what changed.

Pairs where both sides were scored enter the comparison. Everything else is counted and listed,
never silently dropped: pairs only one run has, and pairs one side could not score
(an infrastructure error or an unscored answer).

Each difference B − A (agreement, strict agreement, by node and tool) comes with an interval
and a p-value that account for sessions (steps of a session are not independent), via
:func:`~agent_backtest.statistics.paired_difference`; the test inverts the interval, so the two
always agree on significance. McNemar's exact test on strict agreement is reported beside it,
labelled unclustered: it treats every pair as independent, which overstates the evidence when a
session's steps move together.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_backtest.reporting.loading import Key, ScoredRun
from agent_backtest.runs.comparison import (
    AnswerKey,
    ComparedRun,
    Comparison,
    Counts,
    Flip,
    Flips,
    GroupChange,
    McNemar,
    Missing,
    NotComparable,
    PairedRates,
)
from agent_backtest.runs.estimate import MeanEstimate
from agent_backtest.runs.scores import ScoreRecord
from agent_backtest.statistics import clustered_mean, mcnemar_exact, paired_difference

Pair = tuple[ScoreRecord, ScoreRecord]


@dataclass
class Pairing:
    """The records of two runs, paired by ``(unit_id, repeat)``."""

    pairs: list[Pair]
    only_a: list[ScoreRecord]
    only_b: list[ScoreRecord]
    not_comparable: list[Pair]


def pair_records(a: Sequence[ScoreRecord], b: Sequence[ScoreRecord]) -> Pairing:
    """Pair by key, in A's order (then B's): scored pairs, one-sided keys, unscorable pairs."""
    by_key: dict[Key, ScoreRecord] = {(r.unit_id, r.repeat): r for r in b}
    seen: set[Key] = set()
    pairing = Pairing([], [], [], [])
    for record in a:
        key = (record.unit_id, record.repeat)
        seen.add(key)
        other = by_key.get(key)
        if other is None:
            pairing.only_a.append(record)
        elif record.status == "scored" and other.status == "scored":
            pairing.pairs.append((record, other))
        else:
            pairing.not_comparable.append((record, other))
    pairing.only_b = [r for r in b if (r.unit_id, r.repeat) not in seen]
    return pairing


def compare_runs(a: ScoredRun, b: ScoredRun) -> Comparison:
    """The whole comparison of run ``b`` against run ``a``."""
    a_scores, b_scores = list(a.scores()), list(b.scores())
    pairing = pair_records(a_scores, b_scores)
    pairs = pairing.pairs
    flips_down = [p for p in pairs if p[0].strict and not p[1].strict]
    flips_up = [p for p in pairs if not p[0].strict and p[1].strict]
    both_right = sum(bool(x.strict and y.strict) for x, y in pairs)
    routed = [p for p in pairs if p[0].topic_match is not None and p[1].topic_match is not None]
    return Comparison(
        a=side(a, len(a_scores)),
        b=side(b, len(b_scores)),
        counts=Counts(
            paired=len(pairs),
            sessions=len({x.session_id for x, _ in pairs}),
            only_in_a=len(pairing.only_a),
            only_in_b=len(pairing.only_b),
            not_comparable=len(pairing.not_comparable),
        ),
        agreement=paired_rates(pairs, lambda r: r.score or 0.0),
        strict=paired_rates(pairs, lambda r: float(bool(r.strict))),
        topic_agreement=paired_rates(routed, lambda r: float(bool(r.topic_match))),
        mcnemar=McNemar(
            a_right_b_wrong=len(flips_down),
            a_wrong_b_right=len(flips_up),
            both_right=both_right,
            both_wrong=len(pairs) - both_right - len(flips_down) - len(flips_up),
            p_value=mcnemar_exact(len(flips_down), len(flips_up)),
            test="McNemar exact, unclustered: two-sided binomial on the discordant pairs, "
            "each pair taken as independent (see the clustered p-value of strict)",
        ),
        flips=Flips(
            a_right_b_wrong=[flip(p) for p in flips_down],
            a_wrong_b_right=[flip(p) for p in flips_up],
        ),
        by_node=group_deltas(pairs, lambda r: r.node or "(no node)"),
        by_tool=group_deltas(pairs, lambda r: r.golden_tool or "(text answer)"),
        missing=Missing(
            only_in_a=[key_of(r) for r in pairing.only_a],
            only_in_b=[key_of(r) for r in pairing.only_b],
            not_comparable=[
                NotComparable(
                    **key_of(x).model_dump(),
                    status_a=x.status,
                    status_b=y.status,
                    error_a=x.error_kind,
                    error_b=y.error_kind,
                )
                for x, y in pairing.not_comparable
            ],
        ),
        warnings=compare_warnings(a, b, pairing),
    )


def side(run: ScoredRun, records: int) -> ComparedRun:
    """What one run is, and its own headline figures (over all its scored answers)."""
    summary = run.summary
    patch = run.manifest.config.patch
    return ComparedRun(
        run=str(run.path),
        name=run.path.name,
        model=summary.run.model,
        patch=patch.file if patch else None,
        k=summary.run.k,
        judge=summary.scoring.judge,
        scoring_id=summary.scoring.scoring_id,
        labels=summary.labels,
        records=records,
        agreement=summary.overall.agreement,
        strict=summary.overall.strict,
        topic_agreement=summary.topic_agreement,
        undecided_bounds=summary.undecided_bounds,
    )


def paired_rates(pairs: Sequence[Pair], value: Callable[[ScoreRecord], float]) -> PairedRates:
    """A's and B's rate over the paired answers and their paired difference B − A."""
    sessions = [x.session_id for x, _ in pairs]
    test = paired_difference((value(x), value(y), x.session_id) for x, y in pairs)
    return PairedRates(
        a=MeanEstimate.of(clustered_mean([value(x) for x, _ in pairs], sessions)),
        b=MeanEstimate.of(clustered_mean([value(y) for _, y in pairs], sessions)),
        difference=MeanEstimate.of(test.estimate),
        p_value=test.p_value,
    )


def group_deltas(pairs: Sequence[Pair], label: Callable[[ScoreRecord], str]) -> list[GroupChange]:
    """Agreement change per group, largest change first (by size, either direction)."""
    groups: defaultdict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        groups[label(pair[0])].append(pair)
    rows = [group_change(name, items) for name, items in groups.items()]
    return sorted(rows, key=lambda row: (-abs(row.difference.mean or 0.0), row.label))


def group_change(label: str, pairs: Sequence[Pair]) -> GroupChange:
    """One group's agreement in each run and its paired change."""
    rates = paired_rates(pairs, lambda r: r.score or 0.0)
    return GroupChange(label=label, n=len(pairs), **rates.model_dump())


def flip(pair: Pair) -> Flip:
    """One pair whose strict agreement changed."""
    x, y = pair
    return Flip(
        **key_of(x).model_dump(),
        node=x.node,
        golden_tool=x.golden_tool,
        bucket_a=x.bucket,
        bucket_b=y.bucket,
        candidate_tool_a=x.candidate_tool,
        candidate_tool_b=y.candidate_tool,
    )


def key_of(record: ScoreRecord) -> AnswerKey:
    """The identity of an answer."""
    return AnswerKey(unit_id=record.unit_id, repeat=record.repeat, session_id=record.session_id)


def compare_warnings(a: ScoredRun, b: ScoredRun, pairing: Pairing) -> list[str]:
    """What could make the difference mean something other than the change under test."""
    warnings = []
    if a.summary.scoring.scoring_id != b.summary.scoring.scoring_id:
        warnings.append(
            "the runs were scored with different settings (judge, matcher or agent "
            "config): part of the difference may come from scoring; score both "
            "with the same settings"
        )
    if not pairing.pairs:
        warnings.append("no answer was scored in both runs: they share no (unit, repeat)")
    if pairing.only_a or pairing.only_b:
        warnings.append(
            f"{len(pairing.only_a)} answers are only in A and {len(pairing.only_b)} "
            "only in B: they are listed, not compared"
        )
    if pairing.not_comparable:
        warnings.append(
            f"{len(pairing.not_comparable)} paired answers were not decided on both "
            "sides (infrastructure error, unscored, or text not judged) and are left out"
        )
    return warnings
