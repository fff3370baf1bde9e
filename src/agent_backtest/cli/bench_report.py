"""``abt bench report``: summary.json, results.csv and report.html of a bench run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent_backtest.bench.page import figure
from agent_backtest.bench.results import (
    CSV_FILE,
    PAGE_FILE,
    SUMMARY_FILE,
    BenchSummary,
    CaseMean,
    write_results,
)
from agent_backtest.cli.terminal import SafeConsole

BenchRunArgument = Annotated[
    Path,
    typer.Argument(
        metavar="RUN", show_default=False, help="A bench run directory (abt bench run)."
    ),
]
AllowPartialOption = Annotated[
    bool,
    typer.Option(
        "--allow-partial",
        help="Use a run that is still running (or was killed while running): what it recorded.",
    ),
]


def report(run: BenchRunArgument, allow_partial: AllowPartialOption = False) -> None:
    """Write summary.json, results.csv and report.html into a bench run; print pass^k."""
    summary = write_results(run, allow_partial=allow_partial)
    console = SafeConsole(highlight=False, soft_wrap=True)
    for line in summary_lines(summary):
        console.print(line, markup=False)
    console.print(
        f"wrote {run / SUMMARY_FILE}, {run / CSV_FILE} ({summary.counts.episodes} rows) and "
        f"{run / PAGE_FILE}",
        markup=False,
    )


def summary_lines(summary: BenchSummary) -> list[str]:
    """The summary as lines of text: warnings, counts, pass^k and pass@k, rewards, costs."""
    run, counts = summary.run, summary.counts
    lines = [f"warning: {warning}" for warning in summary.warnings]
    benchmark = " ".join(p for p in (run.benchmark, run.benchmark_version) if p) or "benchmark ?"
    lines.append(
        f"{benchmark} · {run.status or 'no status'} · {counts.episodes} episodes: "
        f"{counts.graded} graded (of {counts.cases} cases), {counts.passed} passed, "
        f"{counts.errors} engineering errors, {counts.ungraded} not graded yet"
    )
    lines += [
        f"pass^{k} {figure(hat)} · pass@{k} {figure(summary.pass_at_k[k])} · {hat.cases} cases"
        for k, hat in summary.pass_hat_k.items()
    ]
    lines.append(f"mean reward {figure(summary.reward)} ({_over(summary.reward)})")
    lines += [
        f"  {name} {figure(c.mean)} ({_over(c.mean)}; {c.not_graded} not graded)"
        for name, c in summary.components.items()
    ]
    costs = [
        f"{name.replace('_', ' ')} {_plain(e)}"
        for name, e in summary.per_episode.items()
        if name != "steps"
    ]
    lines.append("per graded episode: " + " · ".join(costs))
    if counts.errors_by_kind:
        errors = ", ".join(f"{kind} {n}" for kind, n in counts.errors_by_kind.items())
        lines.append(f"engineering errors (no reward, not in the means): {errors}")
    return lines


def _over(estimate: CaseMean) -> str:
    return f"{estimate.n} episodes, {estimate.cases} cases"


def _plain(estimate: CaseMean) -> str:
    return "not recorded" if estimate.mean is None else f"{estimate.mean:.3g}"
