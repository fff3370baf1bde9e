"""``abt patch check``: what a patch would change in each unit, without a run; and the coverage
step ``abt replay --patch`` takes before anything is sent."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from agent_backtest import api
from agent_backtest.api import AgentOptions, ReadingOptions, SelectionOptions
from agent_backtest.cli.flags import with_groups
from agent_backtest.cli.options import OUTPUT, UnitsOrTraces, argument, option
from agent_backtest.cli.terminal import SafeConsole

if TYPE_CHECKING:
    from agent_backtest.api.patches import CoverageReport

UNMATCHED_EXIT = 1

PatchFileArgument = argument(Path, "PATCH", "The patch file (abt.patch/1, JSON or YAML).")
ShowDiff = option(
    bool,
    "--diff/--no-diff",
    OUTPUT,
    "Show the first request each op changed, before and after.",
)
CoverageJson = option(
    bool, "--json", OUTPUT, "Print the coverage report as JSON (as patch_coverage.json holds it)."
)


@with_groups()
def check(
    reading: ReadingOptions,
    agent: AgentOptions,
    selection: SelectionOptions,
    patch_file: PatchFileArgument,
    inputs: UnitsOrTraces,
    diff: ShowDiff = True,
    json_report: CoverageJson = False,
) -> None:
    """Apply a patch to the units and report, per op, how many units have its target and how
    many it changed; exit 1 when an op matches nothing."""
    checked = api.check_patch(patch_file, inputs, reading=reading, agent=agent, selection=selection)
    report = checked.report
    if json_report:
        typer.echo(report.to_json().decode(), nl=False)
    else:
        console = SafeConsole(highlight=False, soft_wrap=True)
        print_coverage(console, report)
        if diff:
            for text in checked.diffs().values():
                console.print("")
                console.print(text, markup=False)
    if report.unmatched:
        SafeConsole(stderr=True, highlight=False, soft_wrap=True).print(
            f"abt: {_unmatched_sentence(report)}", markup=False
        )
        raise typer.Exit(UNMATCHED_EXIT)


def print_coverage(console: Console, report: CoverageReport) -> None:
    """The coverage report as an aligned table, then the message of every op not ok."""
    ops = f"{len(report.ops)} op" + ("s" if len(report.ops) != 1 else "")
    console.print(
        f"patch {report.patch_file}: {ops} over {report.units} units; "
        f"{report.units_changed} requests changed",
        markup=False,
        soft_wrap=True,
    )
    rows = [("op", "target", "action", "in scope", "with target", "changed", "status")]
    rows += [
        (
            op.id,
            op.target,
            op.action,
            str(op.units_in_scope),
            str(op.units_with_target),
            str(op.units_changed),
            op.status,
        )
        for op in report.ops
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [
            cell.rjust(width) if 3 <= i <= 5 else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        console.print("  " + "  ".join(cells).rstrip(), markup=False, soft_wrap=True)
    for op in report.ops:
        if op.message:
            console.print(f"  {op.id} ({op.status}): {op.message}", markup=False, soft_wrap=True)


def _unmatched_sentence(report: CoverageReport) -> str:
    """E.g. "2 patch op(s) matched nothing: 'a', 'b'"."""
    names = ", ".join(repr(op_id) for op_id in report.unmatched)
    return f"{len(report.unmatched)} patch op(s) matched nothing: {names}"
