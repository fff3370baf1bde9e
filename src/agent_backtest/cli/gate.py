"""``abt gate``: fail a CI job when a run's agreement (or a simulate run's pass rate) is below
the bar."""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from typing import Any

import typer

from agent_backtest import Run, api
from agent_backtest.api.reports import is_simulate_run, simulate_summary
from agent_backtest.api.results import BAR_NOT_MET
from agent_backtest.cli.compare import LowerBoundOption
from agent_backtest.cli.flags import flag, with_groups
from agent_backtest.cli.markdown import gate_markdown
from agent_backtest.cli.options import SCORING
from agent_backtest.cli.report import FormatOption, OutputFormat, RunArgument
from agent_backtest.cli.simulate_figures import rate_line
from agent_backtest.cli.terminal import SafeConsole

SHARE = flag(SCORING, "F", min=0.0, max=1.0)  # a bar on a share of answers or flows


@dataclass
class GateBars:
    """A scored run's agreement bars, and a simulate run's pass-rate bar; None is not asked."""

    min_agreement: float | None = field(default=None, metadata=SHARE)
    """Agreement must be at least F."""
    min_strict: float | None = field(default=None, metadata=SHARE)
    """Strict agreement must be at least F."""
    min_decided: float | None = field(default=None, metadata=SHARE)
    """At least this share of answers must be decided (by the matcher, the judge or the same
    text) [default: more than none]."""
    max_infra_errors: int | None = field(default=None, metadata=flag(SCORING, "N", min=0))
    """At most N answers may end in an infrastructure error of the candidate's call."""
    max_infra_error_rate: float | None = field(default=None, metadata=SHARE)
    """At most this share of answers may end in an infrastructure error of the candidate's
    call."""
    max_undecided: float | None = field(default=None, metadata=SHARE)
    """At most this share of answers may be undecided for infrastructure: the candidate's call
    or the judge's failed [default: 0.05]."""
    min_pass_rate: float | None = field(default=None, metadata=SHARE)
    """A simulate run's pass rate (over its flows judged pass or fail) must be at least F."""

    def given(self) -> dict[str, Any]:
        """The bars by name, as ``api.gate`` takes them."""
        return dataclasses.asdict(self)


@with_groups()
def gate(
    bars: GateBars,
    run: RunArgument,
    use_lower_bound: LowerBoundOption = False,
    output_format: FormatOption = OutputFormat.text,
) -> None:
    """Check a scored run, or a simulate run, against bars; exit 3 when one is not met (2 is a
    usage error)."""
    checks = api.gate(run, **bars.given(), use_lower_bound=use_lower_bound)
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
