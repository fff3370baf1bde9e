"""``summary.json``: agreement overall and by kind, node, tool, split and model, with intervals.

Only scored records enter a mean. Unscored records and infrastructure errors are counted beside
it, never as zeros. Every rate is a mean with a 95% interval clustered by session.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from agent_backtest.runs.scores import ScoreRecord
from agent_backtest.statistics import agreement_of, clustered_mean

GROUPINGS: dict[str, Callable[[ScoreRecord], str | None]] = {
    "kind": lambda r: r.kind,
    "node": lambda r: r.node or "(no node)",
    "tool": lambda r: r.golden_tool or "(text answer)",
    "split": lambda r: r.split,
    "model": lambda r: r.model,
}


def summarise(
    records: Sequence[ScoreRecord], settings: dict[str, Any], warnings: Sequence[str] = ()
) -> dict[str, Any]:
    """The run's aggregates as plain data (sorted keys when written)."""
    scored = [r for r in records if r.status == "scored"]
    infra = [r for r in records if r.status == "infra_error"]
    summary: dict[str, Any] = {
        "schema": "abt.summary/1",
        "scoring": settings,
        "warnings": list(warnings),
        "counts": {
            "records": len(records),
            "scored": len(scored),
            "unscored": sum(r.status == "unscored" for r in records),
            "infra_errors": len(infra),
            "infra_errors_by_kind": dict(sorted(Counter(r.error_kind for r in infra).items())),
            "units": len({r.unit_id for r in records}),
            "sessions": len({r.session_id for r in records}),
        },
        "infra_error_rate": clustered_mean(
            [float(r.status == "infra_error") for r in records], [r.session_id for r in records]
        ).as_dict(),
        "overall": aggregate(scored),
        "buckets": dict(sorted(Counter(r.bucket for r in records if r.bucket).items())),
        "methods": dict(sorted(Counter(r.method for r in scored if r.method).items())),
    }
    for name, key in GROUPINGS.items():
        groups: defaultdict[str, list[ScoreRecord]] = defaultdict(list)
        for record in scored:
            label = key(record)
            if label is not None:
                groups[label].append(record)
        summary[f"by_{name}"] = {label: aggregate(items) for label, items in sorted(groups.items())}
    routers = [r for r in scored if r.topic_match is not None]
    summary["topic_agreement"] = clustered_mean(
        [float(bool(r.topic_match)) for r in routers], [r.session_id for r in routers]
    ).as_dict()
    summary["repeats"] = repeat_consistency(records)
    return summary


def aggregate(records: Sequence[ScoreRecord]) -> dict[str, Any]:
    """Agreement (mean lenient score) and strict agreement of scored records, with intervals."""
    sessions = [r.session_id for r in records]
    return {
        "agreement": clustered_mean([r.score or 0.0 for r in records], sessions).as_dict(),
        "strict": clustered_mean([float(bool(r.strict)) for r in records], sessions).as_dict(),
        "buckets": dict(sorted(Counter(r.bucket for r in records if r.bucket).items())),
    }


def repeat_consistency(records: Sequence[ScoreRecord]) -> dict[str, Any] | None:
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
    return {
        "k": max(len(v) for v in by_unit.values()),
        "consistency": clustered_mean(consistency, sessions).as_dict(),
        "pass_all_repeats_strict": clustered_mean(passes, pass_sessions).as_dict(),
    }
