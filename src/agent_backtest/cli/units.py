"""``abt units``: the replay units of traces (one per recorded LLM step), selected and split.

The input may also be a units file (from an earlier ``abt units``): its units are selected again,
and with router rules given (``--router-nodes``, ``--agent-config``) their kinds recomputed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson
import typer
from rich.console import Console
from rich.markup import escape

from agent_backtest import api
from agent_backtest.api import AgentOptions, ReadingOptions, SelectionOptions
from agent_backtest.cli.flags import with_groups
from agent_backtest.cli.options import OUTPUT, JsonReport, argument, option
from agent_backtest.cli.output import STDOUT, output_file
from agent_backtest.cli.render import input_report, print_input_table
from agent_backtest.cli.terminal import SafeConsole, one_line

TracesOrUnits = argument(
    list[Path],
    "INPUT",
    "Trace files in any supported format (detected from the content), or one units file to "
    "select from again.",
)
UnitsFile = option(
    Path, "-o --output", OUTPUT, "Write the units here (JSONL; - for stdout).", metavar="FILE"
)


@with_groups()
def units(
    reading: ReadingOptions,
    agent: AgentOptions,
    selection: SelectionOptions,
    inputs: TracesOrUnits,
    output: UnitsFile,
    json_report: JsonReport = False,
) -> None:
    """Build one replay unit per recorded LLM step: the request as sent, production's answer."""
    with output_file(output) as handle:
        outcome = api.write_units(
            inputs, handle.write, reading=reading, agent=agent, selection=selection
        )
    written = outcome.written
    if outcome.units_file is not None:
        reports = [_units_file_report(inputs[0], outcome.units_file, outcome.reclassified)]
    else:
        reports = [input_report(*read) for read in outcome.inputs]
    err = SafeConsole(stderr=True, highlight=False, soft_wrap=True)
    exclusion = outcome.exclusion
    if exclusion is not None:
        err.print(
            f"--exclude-sessions {exclusion.file}: {exclusion.matched} of its "
            f"{exclusion.sessions} sessions are in the input",
            markup=False,
        )
    result: dict[str, Any] = {
        "inputs": reports,
        "written": dict(sorted(written.items())),
        "dropped": dict(sorted(outcome.dropped.items())),
        "output": str(output),
    }
    if exclusion is not None:
        result["excluded_sessions"] = asdict(exclusion)
    if json_report:
        text = orjson.dumps(result, option=orjson.OPT_INDENT_2).decode()
        typer.echo(text, err=output == STDOUT)
        return
    console = err if output == STDOUT else SafeConsole()
    if outcome.units_file is not None:
        _print_units_file_report(console, reports[0])
    else:
        print_input_table(console, reports)
    dropped = ", ".join(f"{k} {v}" for k, v in result["dropped"].items()) or "none"
    kinds = ", ".join(f"{k} {v}" for k, v in result["written"].items()) or "none"
    where = "standard output" if output == STDOUT else output
    console.print(
        one_line(
            f"wrote {sum(written[k] for k in ('router', 'action'))} units to {where} "
            f"({kinds}); left out by selection: {dropped}"
        ),
        markup=False,
        highlight=False,
    )


def _units_file_report(path: Path, units: Counter[str], reclassified: bool) -> dict[str, Any]:
    """What was read from a units file: units by kind, and whether the kinds were recomputed."""
    return {
        "file": str(path),
        "format": "units",
        "units": dict(sorted(units.items())),
        "reclassified": reclassified,
    }


def _print_units_file_report(console: Console, report: dict[str, Any]) -> None:
    counts = " · ".join(f"{kind} {count}" for kind, count in report["units"].items()) or "none"
    how = "recomputed under the router rules given" if report["reclassified"] else "as written"
    console.print(f"[bold]{escape(report['file'])}[/bold]  (units file)")
    console.print(f"  units     {escape(counts)} (kinds {how})")
