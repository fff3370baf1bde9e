"""``abt score``: compare a run's answers with production's, step by step."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent_backtest import api
from agent_backtest.api import AgentOptions, JudgeOptions
from agent_backtest.cli.flags import with_groups
from agent_backtest.cli.options import CALLS, MAX_CONCURRENCY, ROLES, argument, option
from agent_backtest.cli.roles import JudgeFlags
from agent_backtest.cli.spending import spent_line
from agent_backtest.cli.terminal import SafeConsole, one_line, print_warnings
from agent_backtest.reporting.figures import interval_label, rate, rate_with_count

if TYPE_CHECKING:
    from agent_backtest.runs import Summary
    from agent_backtest.runs.estimate import MeanEstimate
    from agent_backtest.scoring.run import ScoreOutcome


ReplayRun = argument(Path, "RUN", "A run directory from abt replay.")
JudgesConfig = option(
    Path | None,
    "--config",
    ROLES,
    "Model config (abt.toml) the judges are reached through [default: the run's].",
    metavar="FILE",
)
Workers = option(
    int | None,
    "--workers",
    CALLS,
    "Processes sharing the answers when no judge is set (Linux) [default: one per core, at most "
    "one per 2,500 answers].",
    metavar="N",
    max=MAX_CONCURRENCY,
)


@with_groups()
def score(
    judges: JudgeFlags,
    judging: JudgeOptions,
    agent: AgentOptions,
    run: ReplayRun,
    config_file: JudgesConfig = None,
    workers: Workers = None,
) -> None:
    """Score a run's results against production's answers; never calls the candidate."""
    outcome = api.score(
        run,
        roles=judges.roles(),
        judging=judging,
        agent=agent,
        config_file=config_file,
        workers=workers,
    )
    print_outcome(SafeConsole(highlight=False), run, outcome)


MAX_ROWS = 15  # groups of one kind printed, the largest first


def headline_lines(summary: Summary) -> list[str]:
    """The headline of a scored run: exact, then agreement, each with what its interval is,
    then what was decided."""
    overall, counts = summary.overall, summary.counts

    def labelled(estimate: MeanEstimate) -> str:
        """The rate, and what its interval is when it has one."""
        said = rate(estimate)
        return f"{said} {interval_label(counts.sessions)}" if estimate.ci95 else said

    return [
        f"exact {labelled(overall.strict)} · exactly right",
        f"agreement {labelled(overall.agreement)} · partial credit",
        counts.coverage(),
    ]


def print_outcome(console: SafeConsole, run: Path, outcome: ScoreOutcome) -> None:
    """The headline figures, breakdowns, buckets and warnings of a scoring."""
    from rich.table import Table

    from agent_backtest import Run

    summary = outcome.summary
    counts = summary.counts
    print_warnings(console, summary.warnings)
    for line in headline_lines(summary):
        console.print(line, markup=False)
    if summary.undecided_bounds is not None:
        console.print(summary.undecided_bounds.text(counts.records), markup=False)
    if counts.no_judge:
        console.print(
            f"text not judged: {counts.no_judge} answers, text_similarity "
            f"{rate(summary.text_similarity)} (token overlap, not a verdict; pass --judge MODEL "
            "to decide them)",
            markup=False,
        )
    if summary.topic_agreement.n:
        console.print(f"router agreement {rate_with_count(summary.topic_agreement)}", markup=False)
    if summary.run.partial:
        console.print(
            "partial: the run was interrupted; these figures cover the answers that arrived",
            markup=False,
        )
    if summary.spent:
        console.print(spent_line(summary.spent), markup=False)
    table = Table("group", "n", "exact", "agreement", show_edge=False, title_justify="left")
    left_out = []
    for grouping, groups in (
        ("kind", summary.by_kind),
        ("node", summary.by_node),
        ("tool", summary.by_tool),
        ("split", summary.by_split),
        ("agent version", summary.by_agent_version if len(summary.by_agent_version) > 1 else {}),
    ):
        shown = groups.items()
        if len(groups) > MAX_ROWS:  # a terminal table of hundreds of tools helps no one
            shown = sorted(shown, key=lambda item: -item[1].agreement.n)[:MAX_ROWS]
            left_out.append(f"{len(groups) - MAX_ROWS} more {grouping} groups")
        for label, figures in shown:
            table.add_row(
                f"{grouping} {label}",
                str(figures.agreement.n),
                rate(figures.strict),
                rate(figures.agreement),
            )
    console.print(table)
    if left_out:
        console.print(
            f"the largest {MAX_ROWS} of each grouping shown; {', '.join(left_out)} are in "
            "summary.json and the report",
            markup=False,
        )
    buckets = " · ".join(f"{name} {n}" for name, n in summary.buckets.items())
    console.print(f"buckets: {buckets or 'none'}", markup=False)
    if counts.infrastructure_kinds:
        errors = " · ".join(f"{k} {v}" for k, v in counts.infrastructure_kinds.items())
        console.print(f"infrastructure errors (not scored): {errors}", markup=False)
    for path in outcome.kept_earlier:
        console.print(one_line(f"earlier scoring kept as {path}"), markup=False)
    directory = Run(run).directory
    console.print(
        one_line(f"wrote {directory.scores_path} and {directory.summary_path}"), markup=False
    )
    report = directory.report_path
    if report.exists() and report.stat().st_mtime < directory.summary_path.stat().st_mtime:
        console.print(
            one_line(f"{report} shows an earlier scoring: abt report {run} brings it up to date"),
            markup=False,
        )
