"""``abt gate``: fail a CI job when a run's agreement (or a simulate run's pass rate) is below
the bar."""

from __future__ import annotations

import sys

import typer

from agent_backtest import api
from agent_backtest.api.options import GateBars
from agent_backtest.cli.compare import LowerBoundOption
from agent_backtest.cli.flags import with_groups
from agent_backtest.cli.markdown import gate_markdown
from agent_backtest.cli.report import FormatOption, OutputFormat, RunArgument
from agent_backtest.cli.simulate_figures import rate_line
from agent_backtest.cli.terminal import SafeConsole


@with_groups()
def gate(
    bars: GateBars,
    run: RunArgument,
    use_lower_bound: LowerBoundOption = False,
    output_format: FormatOption = OutputFormat.text,
) -> None:
    """Check a scored run, or a simulate run, against bars; exit 3 when one is not met (2 is a
    usage error)."""
    from agent_backtest import Run
    from agent_backtest.api.reports import is_simulate_run, simulate_summary
    from agent_backtest.api.results import BAR_NOT_MET

    checks = api.gate(run, bars, use_lower_bound=use_lower_bound)
    if is_simulate_run(run):
        coverage = rate_line("pass rate", simulate_summary(run).overall)
    else:
        summary = Run(run).summary
        coverage = summary.counts.coverage()
        if summary.undecided_bounds is not None:
            coverage += f"; {summary.undecided_bounds.text(summary.counts.records)}"
    passed = all(check.met for check in checks)
    if output_format is OutputFormat.markdown:
        sys.stdout.write(gate_markdown(checks, name=run.name, coverage=coverage))
    else:
        console = SafeConsole(highlight=False)
        console.print(coverage, markup=False, soft_wrap=True)
        for check in checks:
            console.print(
                ("met: " if check.met else "NOT met: ") + check.why, markup=False, soft_wrap=True
            )
        console.print(f"gate {'passed' if passed else 'failed'}: {run}", markup=False)
    if not passed:
        SafeConsole(stderr=True, highlight=False).print(
            "abt: bar not met: " + "; ".join(c.why for c in checks if not c.met),
            markup=False,
            soft_wrap=True,  # one line, as a CI log is searched
        )
        raise typer.Exit(BAR_NOT_MET)
