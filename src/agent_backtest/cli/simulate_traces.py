"""``abt simulate traces``: the agent's own traces joined to a simulate run's conversations."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent_backtest import api
from agent_backtest.cli.options import INPUTS, OUTPUT
from agent_backtest.cli.terminal import SafeConsole, one_line


def traces(
    run: Annotated[
        Path,
        typer.Argument(
            metavar="RUN", show_default=False, help="A run directory from abt simulate run."
        ),
    ],
    trace_files: Annotated[
        list[Path],
        typer.Argument(
            metavar="TRACEFILE...",
            show_default=False,
            help="The agent's own exported traces, in any format abt ingest reads.",
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            rich_help_panel=OUTPUT,
            metavar="FILE",
            help="Where the joined sessions go (canonical JSONL) [default: "
            "RUN/agent_sessions.jsonl].",
        ),
    ] = None,
    input_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            rich_help_panel=INPUTS,
            metavar="NAME",
            help="Read every trace file as this format (abt ingest).",
        ),
    ] = None,
) -> None:
    """Join the agent's own traces to a simulate run's conversations (by the traceparent each
    turn carried, or the agent's session id) and write them as sessions whose model calls abt
    replay can backtest."""
    written = api.simulate_traces(
        run, trace_files, out=out, reading=api.ReadingOptions(format=input_format)
    )
    joined = written.joined
    console = SafeConsole(highlight=False)
    console.print(
        f"joined {joined.joined} of {joined.conversations} conversations to the agent's traces "
        f"({joined.read} sessions read, {joined.unmatched} of no conversation of the run)",
        markup=False,
    )
    steps = sum(
        1 for session in joined.sessions for step in session.steps() if step.llm is not None
    )
    console.print(one_line(f"{steps} model calls: wrote {written.path}"), markup=False)
