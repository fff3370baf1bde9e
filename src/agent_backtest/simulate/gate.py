"""Bars for CI on simulate runs: the pass rate a run must reach, the drop a candidate may take.

As for replay runs (:mod:`agent_backtest.reporting.gate`), a bar applies to the point estimate,
or with ``use_lower_bound`` to the pessimistic end of the 95% interval; a rate without an
interval (one seed) then does not meet it, since nothing shows it holds. A run with no decided
verdict has no pass rate to hold to a bar, and is refused rather than passed or failed.
"""

from __future__ import annotations

from pathlib import Path

from agent_backtest.errors import InputError
from agent_backtest.reporting.gate import Check
from agent_backtest.simulate.summary import SeedMean, SimulateSummary


def gate_summary(
    run: Path, summary: SimulateSummary, min_pass_rate: float, use_lower_bound: bool
) -> list[Check]:
    """The pass-rate bar on a simulate run's summary; refused when nothing was decided."""
    overall = summary.overall
    if overall.decided == 0:
        raise InputError(
            run,
            None,
            f"no decided verdict ({overall.uncertain} uncertain, {overall.unjudged} not judged, "
            f"{overall.not_played} not played of {overall.flows} flows): nothing to gate; "
            "judge it first (abt simulate judge RUN)",
        )
    return [at_least("pass rate", overall.rate, min_pass_rate, use_lower_bound)]


def at_least(name: str, estimate: SeedMean, bar: float, use_lower_bound: bool) -> Check:
    """``estimate`` (a rate, or a difference) must be at least ``bar``."""
    if estimate.mean is None:
        value, what = None, "nothing decided"
    elif not use_lower_bound:
        value, what = estimate.mean, "point estimate"
    elif estimate.low is None:
        value, what = None, "no interval (fewer than 2 seeds)"
    else:
        value, what = estimate.low, "lower bound of the 95% interval"
    if value is None:
        return Check(name, f"≥ {bar:g}", None, False, f"{name}: {what}, so the bar is not met")
    met = value >= bar
    return Check(
        name, f"≥ {bar:g}", value, met, f"{name} {what} {value:.4f} {'>=' if met else '<'} {bar:g}"
    )
