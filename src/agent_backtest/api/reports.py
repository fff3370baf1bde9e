"""``report()``, ``compare()`` and ``gate()``: what a scored run says, for people and for CI."""

from __future__ import annotations

from pathlib import Path

from agent_backtest.api.options import PathLike
from agent_backtest.errors import UserError
from agent_backtest.reporting import (
    Check,
    CompareOutcome,
    ReportOutcome,
    gate_compare,
    gate_run,
    scored_summary,
    write_compare,
    write_report,
)
from agent_backtest.runs.run import Run


def _path(run: PathLike | Run) -> Path:
    return run.path if isinstance(run, Run) else Path(run)


def report(run: PathLike | Run) -> ReportOutcome:
    """Write results.csv and report.html (one offline page) into a scored run's directory."""
    return write_report(_path(run))


def compare(
    a: PathLike | Run,
    b: PathLike | Run,
    *,
    out: PathLike | None = None,
    max_drop: float | None = None,
    use_lower_bound: bool = False,
) -> tuple[CompareOutcome, list[Check]]:
    """Compare the baseline run ``a`` with ``b`` (paired by unit and repeat): compare.json and
    compare.html in ``out`` (default: ``b``), and the bar on B's drop when ``max_drop`` is set."""
    outcome = write_compare(_path(a), _path(b), Path(out) if out is not None else None)
    checks = (
        [gate_compare(outcome.compare, max_drop, use_lower_bound)] if max_drop is not None else []
    )
    return outcome, checks


def gate(
    run: PathLike | Run,
    *,
    min_agreement: float | None = None,
    min_strict: float | None = None,
    min_decided: float | None = None,
    max_infra_errors: int | None = None,
    max_infra_error_rate: float | None = None,
    use_lower_bound: bool = False,
) -> list[Check]:
    """The bars asked of a scored run, each met or not (applied to the point estimate, or with
    ``use_lower_bound`` to the pessimistic end of its 95% interval). Unless set, two bars are
    added: something was decided, and at most 5% of answers are infrastructure errors."""
    bars = dict(
        min_agreement=min_agreement,
        min_strict=min_strict,
        min_decided=min_decided,
        max_infra_errors=max_infra_errors,
        max_infra_error_rate=max_infra_error_rate,
    )
    if all(bar is None for bar in bars.values()):
        raise UserError(
            "no bar given: pass --min-agreement, --min-strict, --min-decided, "
            "--max-infra-errors or --max-infra-error-rate"
        )
    return gate_run(scored_summary(_path(run)), **bars, use_lower_bound=use_lower_bound)
