"""Command-line options shared by every command that reads traces."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent_backtest.formats import ReadOptions, SessionStream
from agent_backtest.formats.tools_file import load_tools_file

Inputs = Annotated[
    list[Path],
    typer.Argument(
        metavar="INPUT",
        help="Trace files in any supported format (detected from the content).",
        show_default=False,
    ),
]
FormatOption = Annotated[
    str | None,
    typer.Option(
        "--format", metavar="NAME", help="Read every input as this format instead of detecting it."
    ),
]
ToolsOption = Annotated[
    Path | None,
    typer.Option(
        "--tools",
        metavar="FILE",
        help="Tool definitions (OpenAI function format, JSON) for inputs that do not record them.",
    ),
]
RecordedModelOption = Annotated[
    str | None,
    typer.Option(
        "--recorded-model",
        metavar="MODEL",
        help="The model that answered, for formats that do not record it (τ-bench).",
    ),
]
StrictOption = Annotated[
    bool,
    typer.Option(
        "--strict", help="Fail on the first record that cannot be used instead of skipping it."
    ),
]


def session_stream(
    inputs: list[Path],
    format: str | None,
    tools: Path | None,
    recorded_model: str | None,
    strict: bool,
) -> SessionStream:
    """The sessions of the inputs, read with the shared options."""
    options = ReadOptions(
        tools=load_tools_file(tools) if tools else None,
        recorded_model=recorded_model,
        strict=strict,
    )
    return SessionStream(inputs, options, format=format)
