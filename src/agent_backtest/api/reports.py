"""``report()``, ``compare()`` and ``gate()``: what a run says, for people and for CI.

Each takes a scored replay run or a simulate run and does what fits its kind (as its run.json
says); a pair of runs must be of one kind, and a bar must be one its run has.
"""

from __future__ import annotations

from pathlib import Path

from agent_backtest.api.options import PathLike
from agent_backtest.errors import InputError, UserError
from agent_backtest.reporting import (
    Check,
    CompareOutcome,
    GateBars,
    ReportOutcome,
    gate_compare,
    gate_run,
    scored_summary,
    write_compare,
    write_report,
)
from agent_backtest.runs.files import check_writable
from agent_backtest.runs.lock import run_lock
from agent_backtest.runs.manifest_base import run_kind
from agent_backtest.runs.run import Run
from agent_backtest.simulate import report as simulate_report
from agent_backtest.simulate.compare import (
    SimulateCompareOutcome,
    compare_verdicts,
    write_comparison,
)
from agent_backtest.simulate.gate import at_least, gate_summary
from agent_backtest.simulate.judging import read_run, read_verdicts
from agent_backtest.simulate.layout import VERDICTS
from agent_backtest.simulate.models import Flow, Verdict
from agent_backtest.simulate.summary import SimulateSummary, summarise


def _path(run: PathLike | Run) -> Path:
    return run.path if isinstance(run, Run) else Path(run)


def is_simulate_run(path: Path) -> bool:
    """True for a simulate run's directory, as its run.json says; a folder that holds no run
    fails with what it is."""
    return run_kind(path) == "simulate"


def report(
    run: PathLike | Run, *, show_secrets: bool = False
) -> ReportOutcome | simulate_report.SimulateReport:
    """Write results.csv and report.html (one offline page) into a scored run's directory; for
    a simulate run, summary.json and report.html. Values shaped like credentials (a key pasted
    into a message) are masked on either page unless ``show_secrets``."""
    path = _path(run)
    if not is_simulate_run(path):
        return write_report(path, show_secrets)
    with run_lock(path, "report on"):
        flows, conversations = read_run(path)
        verdicts = read_verdicts(path / VERDICTS)
        return simulate_report.write_report(
            path, flows, conversations, verdicts.values(), show_secrets
        )


def simulate_summary(run: PathLike | Run) -> SimulateSummary:
    """The summary of a simulate run, from its records as they are now (nothing written)."""
    path = _path(run)
    flows, conversations = read_run(path)
    return summarise(flows, conversations, read_verdicts(path / VERDICTS).values())


def compare(
    a: PathLike | Run,
    b: PathLike | Run,
    *,
    out: PathLike | None = None,
    max_drop: float | None = None,
    use_lower_bound: bool = False,
) -> tuple[CompareOutcome | SimulateCompareOutcome, list[Check]]:
    """Compare the baseline run ``a`` with ``b``: two scored runs paired by unit and repeat
    (compare.json and compare.html), or two simulate runs paired by flow (compare.json),
    written in ``out`` (default: ``b``); with ``max_drop``, the bar on B's drop (in agreement,
    or in pass rate)."""
    path_a, path_b = _path(a), _path(b)
    target = Path(out) if out is not None else None
    if target is not None:
        _check_folder(target)
    kinds = is_simulate_run(path_a), is_simulate_run(path_b)
    if kinds[0] != kinds[1]:
        simulate, other = (path_a, path_b) if kinds[0] else (path_b, path_a)
        raise InputError(
            other,
            None,
            f"is not a simulate run and {simulate} is: compare two simulate runs, or two "
            "scored replay runs",
        )
    if not kinds[0]:
        outcome = write_compare(path_a, path_b, target)
        checks = []
        if max_drop is not None:
            checks.append(gate_compare(outcome.compare, max_drop, use_lower_bound))
        return outcome, checks
    comparison = compare_verdicts(_flows_and_verdicts(path_a), _flows_and_verdicts(path_b))
    written = write_comparison(comparison, target or path_b)
    checks = []
    if max_drop is not None:
        change = "pass rate change B − A"
        checks.append(at_least(change, comparison.difference, -max_drop, use_lower_bound))
    return written, checks


def _check_folder(out: Path) -> None:
    """The folder a comparison is written to can be: not a file, made or written."""
    if out.exists() and not out.is_dir():
        raise UserError(
            f"{out} is a file: name the folder compare.json and compare.html go to", "out"
        )
    check_writable(out / "compare.json", "out")


def _flows_and_verdicts(path: Path) -> tuple[Path, list[Flow], dict[str, Verdict]]:
    """A simulate run's flows and the verdict of each flow judged."""
    flows, _ = read_run(path)
    return path, flows, read_verdicts(path / VERDICTS)


def gate(
    run: PathLike | Run, bars: GateBars | None = None, *, use_lower_bound: bool = False
) -> list[Check]:
    """The bars asked of a run, each met or not (applied to the point estimate, or with
    ``use_lower_bound`` to the pessimistic end of its 95% interval).

    A scored replay run takes the agreement bars; unless set, two are added: something was
    decided, and at most 5% of answers are undecided for infrastructure (the candidate's call
    or the judge's failed; ``max_undecided`` sets another share). A simulate run takes
    ``min_pass_rate``, and is refused when none of its flows has a decided verdict."""
    path = _path(run)
    bars = bars or GateBars()
    given = bars.run_bars_given()
    if is_simulate_run(path):
        if given:
            raise UserError(
                f"is a bar of a scored replay run; {path} is a simulate run: use --min-pass-rate",
                given[0],
            )
        if bars.min_pass_rate is None:
            raise UserError(
                "no bar given for a simulate run: pass --min-pass-rate", "min_pass_rate"
            )
        return gate_summary(path, simulate_summary(path), bars.min_pass_rate, use_lower_bound)
    if bars.min_pass_rate is not None:
        raise UserError(
            f"is a bar of a simulate run; {path} is not one: use --min-agreement or --min-strict",
            "min_pass_rate",
        )
    if not given:
        raise UserError(
            "no bar given: pass --min-agreement, --min-strict, --min-decided, "
            "--max-infra-errors, --max-infra-error-rate or --max-undecided"
        )
    return gate_run(scored_summary(path), bars, use_lower_bound)
