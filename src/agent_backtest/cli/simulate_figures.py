"""A simulate run's figures as lines of text: the pass rate, per family, and what is apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from agent_backtest.reporting.figures import clustered_rate

if TYPE_CHECKING:
    from agent_backtest.simulate.compare import SimulateComparison
    from agent_backtest.simulate.summary import PassRate, SimulateSummary


def rate_line(name: str, rate: PassRate) -> str:
    """One line: ``pass rate 0.750 [0.420, 0.930] · 6 of 8 decided, 4 seeds · 1 uncertain``."""
    parts = [
        f"{name} {clustered_rate(rate.rate)}",
        f"{rate.passed} passed of {rate.decided} decided ({rate.rate.seeds} seeds, "
        f"{rate.flows} flows)",
    ]
    apart = [
        f"{count} {label}"
        for count, label in (
            (rate.uncertain, "uncertain"),
            (rate.unjudged, "not judged"),
            (rate.not_played, "not played"),
        )
        if count
    ]
    if apart:
        parts.append(", ".join(apart) + " (not in the rate)")
    return " · ".join(parts)


def summary_lines(summary: SimulateSummary) -> list[str]:
    """The summary as a few lines of text: the rate overall, per family, and failures."""
    lines = [f"warning: {warning}" for warning in summary.warnings]
    lines.append(rate_line("pass rate", summary.overall))
    if len(summary.families) > 1:
        lines += [f"  {rate_line(name, rate)}" for name, rate in summary.families.items()]
    repeats = summary.overall.repeats
    if repeats is not None:
        lines += [
            f"pass^{k} {clustered_rate(hat)} · pass@{k} {clustered_rate(repeats.pass_at_k[k])} "
            f"({hat.n} flows)"
            for k, hat in repeats.pass_hat_k.items()
        ]
    if summary.uncertain_by_reason:
        lines.append("uncertain by reason: " + _counts_text(summary.uncertain_by_reason))
    if summary.failures_by_owner:
        lines.append("failures by owner: " + _counts_text(summary.failures_by_owner))
        lines.append("failures by category: " + _counts_text(summary.failures_by_category))
    if summary.stop_reasons:
        lines.append("conversations ended by: " + _counts_text(summary.stop_reasons))
    return lines


def _counts_text(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items())


def comparison_lines(comparison: SimulateComparison) -> list[str]:
    """The comparison as a few lines of text."""
    lines = [f"warning: {warning}" for warning in comparison.warnings]
    counts = comparison.counts
    difference = comparison.difference
    if difference.mean is None:
        change = "n/a"
    elif difference.ci95 is None:
        change = f"{difference.mean:+.3f} (no interval: {difference.seeds} seed)"
    else:
        low, high = difference.ci95
        change = f"{difference.mean:+.3f} [{low:+.3f}, {high:+.3f}]"
    p_value = "n/a" if comparison.p_value is None else f"{comparison.p_value:.2g}"
    rate_a, rate_b = clustered_rate(comparison.pass_rate_a), clustered_rate(comparison.pass_rate_b)
    lines.append(
        f"pass rate: A {rate_a} · B {rate_b} · "
        f"B − A {change} · p {p_value} ({counts.decided_in_both} flows decided in both, "
        f"{difference.seeds} seeds)"
    )
    flips = ", ".join(f"{direction} {n}" for direction, n in comparison.flips.items())
    lines.append(f"flips: {flips or 'none'}")
    for flip in comparison.flipped:
        owner = " ".join(filter(None, [flip.b_owner, flip.b_category]))
        lines.append(
            f"  {flip.a} → {flip.b} {flip.flow_id} ({flip.family})"
            + (f" [{owner}]" if owner else "")
        )
    lines.append(
        f"not compared: {counts.only_in_a} only in A, {counts.only_in_b} only in B, "
        f"{counts.not_judged} not judged on both sides"
    )
    return lines
