"""The summary of a scoring: agreement overall and by kind, node, tool, split, model and agent
version, each with its interval.

Only decided records (status ``scored``) enter agreement. Answers no judge decided get their own
figure, ``text_similarity``; unscored records and infrastructure errors are counted beside it,
never as zeros. Every rate is a mean with a 95% interval that accounts for sessions.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from agent_backtest.runs.estimate import MeanEstimate
from agent_backtest.runs.scores import ScoreRecord
from agent_backtest.runs.summary import (
    NOT_RECORDED,
    Counts,
    GroupFigures,
    RepeatFigures,
    RunFacts,
    ScoringSettings,
    Summary,
)
from agent_backtest.statistics import agreement_of, clustered_mean

GROUPINGS: dict[str, Callable[[ScoreRecord], str | None]] = {
    "kind": lambda r: r.kind,
    "node": lambda r: r.node or "(no node)",
    "tool": lambda r: r.golden_tool or "(text answer)",
    "split": lambda r: r.split,
    "model": lambda r: r.model,
    "agent_version": lambda r: r.agent_version or NOT_RECORDED,
}


def summarise(
    records: Sequence[ScoreRecord],
    settings: ScoringSettings,
    run: RunFacts,
    labels: Mapping[str, str],
    warnings: Sequence[str] = (),
) -> Summary:
    """The run's aggregates."""
    scored = [r for r in records if r.status == "scored"]
    not_judged = [r for r in records if r.status == "no_judge"]
    infra = [r for r in records if r.status == "infra_error"]
    routers = [r for r in scored if r.topic_match is not None]
    return Summary(
        scoring=settings,
        run=run,
        labels=dict(sorted(labels.items())),
        warnings=[*warnings, *coverage_warnings(records)],
        counts=Counts(
            records=len(records),
            decided=len(scored),
            no_judge=len(not_judged),
            unscored=sum(r.status == "unscored" for r in records),
            infra_errors=len(infra),
            infra_errors_by_kind=_counts(r.error_kind for r in infra),
            units=len({r.unit_id for r in records}),
            sessions=len({r.session_id for r in records}),
        ),
        infra_error_rate=_mean(
            [float(r.status == "infra_error") for r in records], [r.session_id for r in records]
        ),
        overall=aggregate(scored),
        text_similarity=_mean(
            [r.similarity or 0.0 for r in not_judged], [r.session_id for r in not_judged]
        ),
        buckets=_counts(r.bucket for r in records),
        methods=_counts(r.method for r in scored),
        suspected_injection=sum(bool(r.suspected_injection) for r in records),
        **{f"by_{name}": by_group(scored, key) for name, key in GROUPINGS.items()},
        topic_agreement=_mean(
            [float(bool(r.topic_match)) for r in routers], [r.session_id for r in routers]
        ),
        repeats=repeat_consistency(records),
    )


TOOL_BLIND_MINIMUM = 5  # answers a tool-blindness sign must rest on before the warning
PROMPT_SHORTFALL = 0.5  # a median prompt-token ratio below this suggests the tools were dropped


def coverage_warnings(records: Sequence[ScoreRecord]) -> list[str]:
    """What makes the headline cover less than it seems: undecided answers, a tool-blind
    candidate, answers that speak to the judge."""
    warnings = []
    unscored = sum(r.status == "unscored" for r in records)
    if unscored:
        warnings.append(
            f"{unscored} answers the judge could not score are left out of agreement: it covers "
            "only the answers decided"
        )
    answered = [r for r in records if r.status != "infra_error"]
    expected_tools = [r for r in answered if r.golden_tool is not None]
    if len(expected_tools) >= TOOL_BLIND_MINIMUM and not any(r.candidate_tool for r in answered):
        warnings.append(
            f"the candidate never called a tool, over {len(expected_tools)} answers where "
            "production did: the endpoint may be dropping the tools (some servers ignore "
            "`tools` unless started with a tool-calling chat format)"
        )
    ratios = sorted(r.input_tokens_ratio for r in answered if r.input_tokens_ratio is not None)
    if len(ratios) >= TOOL_BLIND_MINIMUM and ratios[len(ratios) // 2] < PROMPT_SHORTFALL:
        warnings.append(
            f"the candidate reported a median {ratios[len(ratios) // 2]:.2f} of production's "
            f"prompt tokens for the same requests ({len(ratios)} answers): the endpoint may be "
            "dropping the tools or part of the prompt"
        )
    injected = sum(bool(r.suspected_injection) for r in records)
    if injected:
        warnings.append(
            f"{injected} answers hold text aimed at the judge (suspected_injection): read them "
            "before trusting their verdicts"
        )
    return warnings


def by_group(
    scored: Sequence[ScoreRecord], key: Callable[[ScoreRecord], str | None]
) -> dict[str, GroupFigures]:
    """Agreement of each group of scored records, by label; a record labelled None is in none."""
    groups: defaultdict[str, list[ScoreRecord]] = defaultdict(list)
    for record in scored:
        label = key(record)
        if label is not None:
            groups[label].append(record)
    return {label: aggregate(items) for label, items in sorted(groups.items())}


def aggregate(records: Sequence[ScoreRecord]) -> GroupFigures:
    """Agreement (mean lenient score) and strict agreement of scored records, with intervals."""
    sessions = [r.session_id for r in records]
    return GroupFigures(
        agreement=_mean([r.score or 0.0 for r in records], sessions),
        strict=_mean([float(bool(r.strict)) for r in records], sessions),
        buckets=_counts(r.bucket for r in records),
    )


def repeat_consistency(records: Sequence[ScoreRecord]) -> RepeatFigures | None:
    """With k ≥ 2 repeats: how often a unit's answers agree with each other, and pass^k.

    Consistency is the share of pairs of a unit's answered repeats with the same normalised
    answer; pass^k is the share of units whose every repeat is a strict match.
    """
    by_unit: defaultdict[str, list[ScoreRecord]] = defaultdict(list)
    for record in records:
        by_unit[record.unit_id].append(record)
    if not by_unit or max(len(v) for v in by_unit.values()) < 2:
        return None
    consistency, passes, sessions, pass_sessions = [], [], [], []
    for items in by_unit.values():
        answered = [r.answer_signature for r in items if r.answer_signature]
        value = agreement_of(answered)
        if value is not None:
            consistency.append(value)
            sessions.append(items[0].session_id)
        scored = [r for r in items if r.status == "scored"]
        if scored and len(scored) == len(items):
            passes.append(float(all(r.strict for r in scored)))
            pass_sessions.append(items[0].session_id)
    return RepeatFigures(
        k=max(len(v) for v in by_unit.values()),
        consistency=_mean(consistency, sessions),
        pass_all_repeats_strict=_mean(passes, pass_sessions),
    )


def _mean(values: Sequence[float], sessions: Sequence[str]) -> MeanEstimate:
    return MeanEstimate.of(clustered_mean(values, sessions))


def _counts(labels: Iterable[str | None]) -> dict[str, int]:
    """Counts of the labels that are set, sorted by label."""
    return dict(sorted(Counter(label for label in labels if label).items()))
