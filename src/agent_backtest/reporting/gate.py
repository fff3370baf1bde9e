"""Bars for CI: does a run (or a comparison) meet the agreement a change must keep?

By default a bar applies to the point estimate. With ``use_lower_bound`` it applies to the
pessimistic end of the 95% interval instead: the lower bound of an agreement, and for a
comparison the lower bound of B − A (the largest drop the data allow). A bar on an estimate that
has no interval (fewer than two sessions) is then not met, since nothing shows it holds.
Infrastructure errors and decided answers are facts of this run, not estimates: their bars
apply to the counts. Two bars always hold unless the user sets their own: something was decided
(a run where nothing was decided has no agreement to pass), and at most 5% of answers are
undecided for infrastructure, because the candidate's call or the judge's failed (a run whose
calls mostly failed says little about the model, and an agreement over what a broken judge
happened not to need says less).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from agent_backtest.reporting.bars import GateBars
from agent_backtest.runs import Comparison, MeanEstimate, Summary
from agent_backtest.runs.summary import Counts

BAR_NOT_MET = 3  # exit code of ``abt gate`` and ``abt compare --max-drop`` (2 is a user error)
DEFAULT_MAX_UNDECIDED = 0.05


@dataclass(frozen=True)
class Check:
    """One bar: what was required, the value it was checked against, and whether it held."""

    name: str
    requirement: str
    value: float | None
    met: bool
    why: str

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return asdict(self)


def checked_value(estimate: MeanEstimate, use_lower_bound: bool) -> tuple[float | None, str]:
    """The number a bar compares (point or lower bound), and how to name it."""
    if estimate.mean is None:
        return None, "nothing scored"
    if not use_lower_bound:
        return estimate.mean, "point estimate"
    if estimate.low is None:
        return None, "no interval (fewer than 2 sessions)"
    return estimate.low, "lower bound of the 95% interval"


def at_least(name: str, estimate: MeanEstimate, bar: float, use_lower_bound: bool) -> Check:
    """``estimate`` must be at least ``bar``."""
    value, what = checked_value(estimate, use_lower_bound)
    if value is None:
        return Check(name, f"≥ {bar:g}", None, False, f"{name}: {what}, so the bar is not met")
    met = value >= bar
    return Check(
        name, f"≥ {bar:g}", value, met, f"{name} {what} {value:.4f} {'>=' if met else '<'} {bar:g}"
    )


def at_most(name: str, count: float, bar: float) -> Check:
    """An observed count or rate must be at most ``bar``."""
    met = count <= bar
    return Check(name, f"≤ {bar:g}", count, met, f"{name} {count:g} {'<=' if met else '>'} {bar:g}")


def gate_run(summary: Summary, bars: GateBars, use_lower_bound: bool = False) -> list[Check]:
    """The bars asked of one run's summary, with the default bars where none was set.

    ``max_infra_errors`` and ``max_infra_error_rate`` bound the candidate's failed calls;
    ``max_undecided`` (default 0.05) bounds every answer left undecided by a failed call, the
    candidate's or the judge's."""
    checks = []
    if bars.min_agreement is not None:
        checks.append(
            at_least("agreement", summary.overall.agreement, bars.min_agreement, use_lower_bound)
        )
    if bars.min_strict is not None:
        checks.append(
            at_least("exact (strict)", summary.overall.strict, bars.min_strict, use_lower_bound)
        )
    counts = summary.counts
    share = counts.decided_share or 0.0
    if bars.min_decided is not None:
        checks.append(at_least_count("share decided", round(share, 6), bars.min_decided))
    else:
        met = counts.decided > 0
        why = f"{counts.decided} answers decided" + ("" if met else ": nothing to pass")
        checks.append(Check("answers decided", "> 0 (default)", counts.decided, met, why))
    if bars.max_infra_errors is not None:
        checks.append(at_most("infrastructure errors", counts.infra_errors, bars.max_infra_errors))
    if bars.max_infra_error_rate is not None:
        rate = counts.infra_errors / counts.records if counts.records else 0.0
        checks.append(
            at_most("infrastructure error rate", round(rate, 6), bars.max_infra_error_rate)
        )
    if bars.max_undecided is None:
        check = undecided_for_infrastructure(counts, DEFAULT_MAX_UNDECIDED)
        checks.append(replace(check, requirement=f"{check.requirement} (default)"))
    else:
        checks.append(undecided_for_infrastructure(counts, bars.max_undecided))
    return checks


def undecided_for_infrastructure(counts: Counts, bar: float) -> Check:
    """At most the share ``bar`` of answers may be undecided because a call failed (the
    candidate's or the judge's); the reason names the share and the kinds:
    ``undecided for infrastructure: 31 of 60 (51.7%) > 5%: judge_http_5xx 31``."""
    undecided = counts.infrastructure_undecided
    share = undecided / counts.records if counts.records else 0.0
    met = share <= bar
    why = (
        f"undecided for infrastructure: {undecided:,} of {counts.records:,} ({share:.1%}) "
        f"{'<=' if met else '>'} {_percent(bar)}"
    )
    kinds = ", ".join(f"{kind} {n:,}" for kind, n in counts.infrastructure_kinds.items())
    if kinds:
        why += f": {kinds}"
    return Check("undecided for infrastructure", f"≤ {bar:g}", round(share, 6), met, why)


def _percent(share: float) -> str:
    """0.05 as ``5%``, 0.025 as ``2.5%``."""
    return f"{round(share * 100, 4):g}%"


def at_least_count(name: str, value: float, bar: float) -> Check:
    """An observed share must be at least ``bar``."""
    met = value >= bar
    return Check(name, f"≥ {bar:g}", value, met, f"{name} {value:g} {'>=' if met else '<'} {bar:g}")


def gate_compare(compare: Comparison, max_drop: float, use_lower_bound: bool) -> Check:
    """B's agreement may fall below A's by at most ``max_drop`` (on the paired answers)."""
    return at_least(
        "agreement change B − A", compare.agreement.difference, -max_drop, use_lower_bound
    )
