"""``abt gate``: fail a CI job when a run's agreement (or a simulate run's pass rate) is below
the bar."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from agent_backtest import Run, api
from agent_backtest.api.reports import is_simulate_run, simulate_summary
from agent_backtest.api.results import BAR_NOT_MET
from agent_backtest.cli.compare import LowerBoundOption
from agent_backtest.cli.markdown import gate_markdown
from agent_backtest.cli.report import FormatOption, OutputFormat, RunArgument
from agent_backtest.cli.simulate_figures import rate_line
from agent_backtest.cli.terminal import SafeConsole


def gate(
    run: RunArgument,
    min_agreement: Annotated[
        float | None,
        typer.Option(
            "--min-agreement", min=0.0, max=1.0, metavar="F", help="Agreement must be at least F."
        ),
    ] = None,
    min_strict: Annotated[
        float | None,
        typer.Option(
            "--min-strict",
            min=0.0,
            max=1.0,
            metavar="F",
            help="Strict agreement must be at least F.",
        ),
    ] = None,
    min_decided: Annotated[
        float | None,
        typer.Option(
            "--min-decided",
            min=0.0,
            max=1.0,
            metavar="F",
            help="At least this share of answers must be decided (by the matcher, the judge or "
            "the same text) [default: more than none].",
        ),
    ] = None,
    max_infra_errors: Annotated[
        int | None,
        typer.Option(
            "--max-infra-errors",
            min=0,
            metavar="N",
            help="At most N answers may end in an infrastructure error of the candidate's call.",
        ),
    ] = None,
    max_infra_error_rate: Annotated[
        float | None,
        typer.Option(
            "--max-infra-error-rate",
            min=0.0,
            max=1.0,
            metavar="F",
            help="At most this share of answers may end in an infrastructure error of the "
            "candidate's call.",
        ),
    ] = None,
    max_undecided: Annotated[
        float | None,
        typer.Option(
            "--max-undecided",
            min=0.0,
            max=1.0,
            metavar="F",
            help="At most this share of answers may be undecided for infrastructure: the "
            "candidate's call or the judge's failed [default: 0.05].",
        ),
    ] = None,
    min_pass_rate: Annotated[
        float | None,
        typer.Option(
            "--min-pass-rate",
            min=0.0,
            max=1.0,
            metavar="F",
            help="A simulate run's pass rate (over its flows judged pass or fail) must be at "
            "least F.",
        ),
    ] = None,
    use_lower_bound: LowerBoundOption = False,
    output_format: FormatOption = OutputFormat.text,
) -> None:
    """Check a scored run, or a simulate run, against bars; exit 3 when one is not met (2 is a
    usage error)."""
    checks = api.gate(
        run,
        min_agreement=min_agreement,
        min_strict=min_strict,
        min_decided=min_decided,
        max_infra_errors=max_infra_errors,
        max_infra_error_rate=max_infra_error_rate,
        max_undecided=max_undecided,
        min_pass_rate=min_pass_rate,
        use_lower_bound=use_lower_bound,
    )
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
