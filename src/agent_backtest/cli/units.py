"""``abt units``: the replay units of traces (one per recorded LLM step), selected and split.

The input may also be a units file (from an earlier ``abt units``): its units are selected again,
and with router rules given (``--router-nodes``, ``--agent-config``) their kinds recomputed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.markup import escape

from agent_backtest.cli.options import (
    FormatOption,
    RecordedModelOption,
    StrictOption,
    ToolsOption,
    session_stream,
)
from agent_backtest.cli.render import input_report, print_input_table
from agent_backtest.cli.tally import UnitTally
from agent_backtest.cli.unit_options import (
    AgentConfigOption,
    AgentVersionOption,
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
from agent_backtest.errors import UserError
from agent_backtest.runs import private_atomic_writer
from agent_backtest.trace import dump_record
from agent_backtest.units import (
    DEFAULT_SPLIT_SALT,
    AgentConfig,
    Selection,
    Unit,
    is_units_file,
    read_units_file,
    reclassify,
)


def units(
    inputs: Annotated[
        list[Path],
        typer.Argument(
            metavar="INPUT",
            help="Trace files in any supported format (detected from the content), or one "
            "units file to select from again.",
            show_default=False,
        ),
    ],
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
    agent_version: AgentVersionOption = None,
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
        steps,
        node,
        model,
        val_fraction,
        split_salt,
        split,
        exclude_sessions,
        limit,
        per_session,
        agent_version,
    )
    config = agent_config(agent_config_file, router_nodes)
    if len(inputs) == 1 and is_units_file(inputs[0]):
        for parameter, value in (
            ("format", format),
            ("tools", tools),
            ("recorded_model", recorded_model),
        ):
            if value is not None:
                raise UserError("applies to trace files, not to a units file", parameter)
        read: Counter[str] = Counter()
        written = _write(
            output, selection, _counted(reclassify(read_units_file(inputs[0]), config), read)
        )
        reports = [_units_file_report(inputs[0], read, config)]
    else:
        stream = session_stream(inputs, format, tools, recorded_model, strict)
        tally = UnitTally(config)
        all_units = (
            unit
            for session in stream
            for unit in tally.units_of(stream.summaries[-1].file, session)
        )
        written = _write(output, selection, all_units)
        reports = [input_report(s, *tally.for_input(s)) for s in stream.summaries]
    exclusion = selection.exclusion()
    if exclusion is not None:
        Console(stderr=True, highlight=False, soft_wrap=True).print(
            f"--exclude-sessions {exclusion.file}: {exclusion.matched} of its "
            f"{exclusion.sessions} sessions are in the input",
            markup=False,
        )
    result: dict[str, Any] = {
        "inputs": reports,
        "written": dict(sorted(written.items())),
        "dropped": dict(sorted(selection.dropped.items())),
        "output": str(output),
    }
    if exclusion is not None:
        result["excluded_sessions"] = asdict(exclusion)
    if json_report:
        typer.echo(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        return
    console = Console()
    if len(reports) == 1 and reports[0]["format"] == "units":
        _print_units_file_report(console, reports[0])
    else:
        print_input_table(console, reports)
    dropped = ", ".join(f"{k} {v}" for k, v in result["dropped"].items()) or "none"
    kinds = ", ".join(f"{k} {v}" for k, v in result["written"].items()) or "none"
    console.print(
        f"wrote {sum(written[k] for k in ('router', 'action'))} units to {output} "
        f"({kinds}); left out by selection: {dropped}",
        markup=False,
        highlight=False,
    )


def _write(output: Path, selection: Selection, units: Iterable[Unit]) -> Counter[str]:
    """Write the selected units; how many of each kind and split were written."""
    written: Counter[str] = Counter()
    with private_atomic_writer(output) as handle:
        for unit in selection.apply(units):
            handle.write(dump_record(unit) + b"\n")
            written[unit.kind] += 1
            if unit.split:
                written[f"split {unit.split}"] += 1
    return written


def _counted(units: Iterable[Unit], counts: Counter[str]) -> Iterator[Unit]:
    """The units, counted by kind as they pass."""
    for unit in units:
        counts[unit.kind] += 1
        yield unit


def _units_file_report(path: Path, read: Counter[str], config: AgentConfig) -> dict[str, Any]:
    """What was read from a units file: units by kind, and whether the kinds were recomputed."""
    return {
        "file": str(path),
        "format": "units",
        "units": dict(sorted(read.items())),
        "reclassified": config.sets_router_rules(),
    }


def _print_units_file_report(console: Console, report: dict[str, Any]) -> None:
    counts = " · ".join(f"{kind} {count}" for kind, count in report["units"].items()) or "none"
    how = "recomputed under the router rules given" if report["reclassified"] else "as written"
    console.print(f"[bold]{escape(report['file'])}[/bold]  (units file)")
    console.print(f"  units     {escape(counts)} (kinds {how})")
