"""``abt units``: the replay units of traces (one per recorded LLM step), selected and split."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

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
from agent_backtest.cli.unit_options import (
    AgentConfigOption,
    ExcludeSessionsOption,
    LimitOption,
    NodeOption,
    PerSessionOption,
    RouterNodesOption,
    SplitOption,
    SplitSaltOption,
    StepsOption,
    ValFractionOption,
    agent_config,
    make_selection,
)
from agent_backtest.runs import private_atomic_writer
from agent_backtest.trace import dump_record
from agent_backtest.units import DEFAULT_SPLIT_SALT


def units(
    inputs: Inputs,
    output: Annotated[
        Path, typer.Option("-o", "--output", metavar="FILE", help="Write the units here (JSONL).")
    ],
    format: FormatOption = None,
    tools: ToolsOption = None,
    recorded_model: RecordedModelOption = None,
    strict: StrictOption = False,
    agent_config_file: AgentConfigOption = None,
    router_nodes: RouterNodesOption = None,
    steps: StepsOption = "all",
    node: NodeOption = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            metavar="MODEL",
            help="Keep only steps answered by this recorded model (repeatable).",
        ),
    ] = None,
    val_fraction: ValFractionOption = None,
    split_salt: SplitSaltOption = DEFAULT_SPLIT_SALT,
    split: SplitOption = "all",
    exclude_sessions: ExcludeSessionsOption = None,
    limit: LimitOption = None,
    per_session: PerSessionOption = None,
    json_report: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON instead of a table.")
    ] = False,
) -> None:
    """Build one replay unit per recorded LLM step: the request as sent, production's answer."""
    selection = make_selection(
        steps, node, model, val_fraction, split_salt, split, exclude_sessions, limit, per_session
    )
    config = agent_config(agent_config_file, router_nodes)
    stream = session_stream(inputs, format, tools, recorded_model, strict)
    tally = UnitTally(config)
    written: Counter[str] = Counter()
    all_units = (
        unit for session in stream for unit in tally.units_of(stream.summaries[-1].file, session)
    )
    with private_atomic_writer(output) as handle:
        for unit in selection.apply(all_units):
            handle.write(dump_record(unit) + b"\n")
            written[unit.kind] += 1
            if unit.split:
                written[f"split {unit.split}"] += 1
    reports = [input_report(s, *tally.for_input(s)) for s in stream.summaries]
    result = {
        "inputs": reports,
        "written": dict(sorted(written.items())),
        "dropped": dict(sorted(selection.dropped.items())),
        "output": str(output),
    }
    if json_report:
        typer.echo(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        return
    console = Console()
    print_input_table(console, reports)
    dropped = ", ".join(f"{k} {v}" for k, v in result["dropped"].items()) or "none"
    kinds = ", ".join(f"{k} {v}" for k, v in result["written"].items()) or "none"
    console.print(
        f"wrote {sum(written[k] for k in ('router', 'action'))} units to {output} "
        f"({kinds}); left out by selection: {dropped}",
        markup=False,
        highlight=False,
    )
