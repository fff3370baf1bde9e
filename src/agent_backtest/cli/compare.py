"""``abt compare``: pair two scored runs by (unit, repeat), or two simulate runs by flow, and
say what changed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agent_backtest import api
from agent_backtest.cli.markdown import compare_markdown
from agent_backtest.cli.options import OUTPUT, SCORING, argument, option
from agent_backtest.cli.report import FormatOption, OutputFormat, markdown_lines
from agent_backtest.cli.simulate_figures import comparison_lines
from agent_backtest.cli.terminal import SafeConsole, one_line, print_warnings
from agent_backtest.reporting.figures import interval_label, p_text, rate, signed

if TYPE_CHECKING:
    from agent_backtest.api.results import Check, SimulateCompareOutcome
    from agent_backtest.runs import Comparison

MaxDropOption = option(
    float | None,
    "--max-drop",
    SCORING,
    "Fail (exit 3) when B's agreement (simulate runs: pass rate) is more than F below A's on the "
    "paired answers (flows).",
    min=0.0,
    metavar="F",
)
LowerBoundOption = option(
    bool,
    "--use-lower-bound",
    SCORING,
    "Apply the bar to the pessimistic end of the 95% interval instead of the point estimate.",
)
BaselineRun = argument(
    Path,
    "A",
    "The baseline run (e.g. --model trace, the current prompt, or the current agent's simulate "
    "run).",
)
CandidateRun = argument(Path, "B", "The run to compare with it (the candidate).")
CompareOut = option(
    Path | None,
    "--out",
    OUTPUT,
    "Write compare.json (and, for scored runs, compare.html) here [default: B].",
    metavar="DIR",
)


def compare(
    a: BaselineRun,
    b: CandidateRun,
    out: CompareOut = None,
    max_drop: MaxDropOption = None,
    use_lower_bound: LowerBoundOption = False,
    output_format: FormatOption = OutputFormat.text,
) -> None:
    """Compare two scored runs: agreement of each, the paired difference, McNemar, flips; or
    two simulate runs: pass rates, the paired difference, flips by flow."""
    from agent_backtest.api.results import BAR_NOT_MET, SimulateCompareOutcome

    outcome, checks = api.compare(a, b, out=out, max_drop=max_drop, use_lower_bound=use_lower_bound)
    markdown = output_format is OutputFormat.markdown
    if isinstance(outcome, SimulateCompareOutcome):
        _print_simulate(f"abt compare: {a.name} → {b.name}", outcome, checks, markdown)
        written = f"wrote {outcome.json_path}"
    else:
        _print_scored(outcome.compare, checks, markdown)
        written = f"wrote {outcome.json_path} and {outcome.html_path}"
    SafeConsole(stderr=markdown, highlight=False).print(one_line(written), markup=False)
    if not all(check.met for check in checks):
        SafeConsole(stderr=True, highlight=False).print(
            "abt: bar not met: " + "; ".join(c.why for c in checks if not c.met), markup=False
        )
        raise typer.Exit(BAR_NOT_MET)


def _print_simulate(
    title: str, outcome: SimulateCompareOutcome, checks: list[Check], markdown: bool
) -> None:
    """Two simulate runs' pass rates, flips and bars, as text or Markdown."""
    lines = comparison_lines(outcome.compare)
    lines += [("bar met: " if c.met else "bar not met: ") + c.why for c in checks]
    if markdown:
        sys.stdout.write(markdown_lines(title, lines))
        return
    console = SafeConsole(highlight=False)
    for line in lines:
        console.print(line, markup=False, soft_wrap=True)


def _print_scored(result: Comparison, checks: list[Check], markdown: bool) -> None:
    """Two scored runs' agreement, flips and bars, as text or Markdown."""
    if markdown:
        sys.stdout.write(compare_markdown(result, checks))
        return
    console = SafeConsole(highlight=False)
    _print_text(console, result)
    for check in checks:
        console.print(("bar met: " if check.met else "bar not met: ") + check.why, markup=False)


def _print_text(console: SafeConsole, result: Comparison) -> None:
    print_warnings(console, result.warnings)
    figures = [("exact", result.strict), ("agreement", result.agreement)]
    topic = result.topic_agreement
    if topic.a.n:
        figures.append((f"router agreement (n {topic.a.n})", topic))
    for label, rates in figures:
        console.print(
            f"{label}: A {rate(rates.a)} · B {rate(rates.b)} · B − A {signed(rates.difference)}"
            f" · p {p_text(rates.p_value)}",
            markup=False,
        )
    test, counts = result.mcnemar, result.counts
    console.print(
        f"{counts.paired} paired answers · intervals: {interval_label(counts.sessions)}",
        markup=False,
    )
    console.print(
        f"exact flips: {test.a_right_b_wrong} right → wrong, {test.a_wrong_b_right} "
        f"wrong → right · p {p_text(result.strict.p_value)} by session (McNemar, "
        f"unclustered: {test.p_value:.4g})",
        markup=False,
    )
    console.print(
        f"not compared: {counts.only_in_a} only in A, {counts.only_in_b} only "
        f"in B, {counts.not_comparable} not decided on both sides",
        markup=False,
    )
    for side, run in (("A", result.a), ("B", result.b)):
        if run.undecided_bounds is not None:
            console.print(f"{side}: {run.undecided_bounds.text(run.records)}", markup=False)
