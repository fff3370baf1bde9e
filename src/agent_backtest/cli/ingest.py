"""``abt ingest``: read traces in any supported format into canonical sessions JSONL."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import orjson
import typer

from agent_backtest import api
from agent_backtest.api import AgentOptions, ReadingOptions
from agent_backtest.cli.flags import with_groups
from agent_backtest.cli.options import OUTPUT, Inputs, JsonReport, option
from agent_backtest.cli.output import STDOUT, output_file
from agent_backtest.cli.render import input_report, print_input_table
from agent_backtest.cli.terminal import SafeConsole, one_line

SessionsFile = option(
    Path | None,
    "-o --output",
    OUTPUT,
    "Write the sessions here as canonical JSONL (- for stdout).",
    metavar="FILE",
)


@with_groups()
def ingest(
    reading: ReadingOptions,
    agent: AgentOptions,
    inputs: Inputs,
    output: SessionsFile = None,
    json_report: JsonReport = False,
) -> None:
    """Read traces and report, per input, what they hold and how many replay units they give."""
    writer = output_file(output) if output else nullcontext(None)
    with writer as handle:
        read = api.ingest(
            inputs, reading=reading, agent=agent, sink=handle.write if handle else None
        )
    reports = [input_report(i.summary, i.units, i.unit_skips) for i in read]
    if json_report:
        document = {"inputs": reports, "output": str(output) if output else None}
        typer.echo(
            orjson.dumps(document, option=orjson.OPT_INDENT_2).decode(), err=output == STDOUT
        )
        return
    console = SafeConsole(stderr=output == STDOUT)
    print_input_table(console, reports)
    if output:
        total = sum(r["sessions"] for r in reports)
        where = "standard output" if output == STDOUT else output
        console.print(one_line(f"wrote {total} sessions to {where}"), markup=False, highlight=False)
