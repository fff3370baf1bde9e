"""``abt bench report``: summary.json, results.csv and report.html of a bench run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent_backtest import api
from agent_backtest.cli.options import INPUTS, argument, option
from agent_backtest.cli.terminal import SafeConsole, one_line
from agent_backtest.reporting.figures import clustered_rate as figure

if TYPE_CHECKING:
    from agent_backtest.api.bench_reports import BenchSummary, CaseMean

BenchRunArgument = argument(Path, "RUN", "A bench run directory (abt bench run).")
AllowPartialOption = option(
    bool,
    "--allow-partial",
    INPUTS,
    "Use a run that is still running (or was killed while running): what it recorded.",
)


def report(run: BenchRunArgument, allow_partial: AllowPartialOption = False) -> None:
    """Write summary.json, results.csv and report.html into a bench run; print pass^k."""
    written = api.bench_report(run, allow_partial=allow_partial)
    summary, files = written.summary, written.files
    console = SafeConsole(highlight=False, soft_wrap=True)
    for line in summary_lines(summary):
        console.print(line, markup=False)
    console.print(
        one_line(
            f"wrote {files.summary}, {files.csv} ({summary.counts.episodes} rows) and {files.page}"
        ),
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
    setup = run.setup()
    if setup:
        lines.append(f"set up: {setup}")
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
