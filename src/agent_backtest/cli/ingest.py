"""``abt ingest``: read traces in any supported format into canonical sessions JSONL."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, BinaryIO

import orjson
import typer
from rich.console import Console

from agent_backtest.cli.options import (
    FormatOption,
    Inputs,
    RecordedModelOption,
    StrictOption,
    ToolsOption,
    session_stream,
)
from agent_backtest.cli.render import input_report, print_input_table
from agent_backtest.cli.tally import UnitTally
from agent_backtest.cli.unit_options import AgentConfigOption, RouterNodesOption, agent_config
from agent_backtest.runs import private_atomic_writer
from agent_backtest.trace import Session, dump_record


def ingest(
    inputs: Inputs,
    output: Annotated[
        Path | None,
        typer.Option(
            "-o", "--output", metavar="FILE", help="Write the sessions here as canonical JSONL."
        ),
    ] = None,
    format: FormatOption = None,
    tools: ToolsOption = None,
    recorded_model: RecordedModelOption = None,
    strict: StrictOption = False,
    agent_config_file: AgentConfigOption = None,
    router_nodes: RouterNodesOption = None,
    json_report: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON instead of a table.")
    ] = False,
) -> None:
    """Read traces and report, per input, what they hold and how many replay units they give."""
    config = agent_config(agent_config_file, router_nodes)
    stream = session_stream(inputs, format, tools, recorded_model, strict)
    tally = UnitTally(config)
    writer = private_atomic_writer(output) if output else nullcontext(None)
    with writer as handle:
        for session in stream:
            _write(handle, session)
            tally.count(stream.summaries[-1].file, session)
    reports = [input_report(s, *tally.for_input(s)) for s in stream.summaries]
    if json_report:
        typer.echo(
            orjson.dumps(
                {"inputs": reports, "output": str(output) if output else None},
                option=orjson.OPT_INDENT_2,
            ).decode()
        )
        return
    console = Console()
    print_input_table(console, reports)
    if output:
        total = sum(r["sessions"] for r in reports)
        console.print(f"wrote {total} sessions to {output}", markup=False, highlight=False)


def _write(handle: BinaryIO | None, session: Session) -> None:
    if handle is not None:
        handle.write(dump_record(session) + b"\n")
