"""``abt profile``: where an agent loop spends its calls and time, per group, from its traces."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console
from rich.table import Table as RichTable

from agent_backtest.cli.options import (
    FormatOption,
    Inputs,
    RecordedModelOption,
    StrictOption,
    ToolsOption,
    session_stream,
)
from agent_backtest.errors import UserError
from agent_backtest.formats import InputSummary
from agent_backtest.profiling import (
    Profiler,
    load_annotations,
    load_manifest,
    load_prices,
    markdown,
    parse_variants,
    sessions_by_id,
)
from agent_backtest.profiling.cases import RunAnnotation
from agent_backtest.profiling.summary import LEGEND, Table, notes, tables
from agent_backtest.runs.documents import document_bytes, write_document
from agent_backtest.runs.profile import InputRead, Profile

LABELS = frozenset({"group", "tool", "model", "figure", "variant"})


def profile(
    inputs: Inputs,
    group_by: Annotated[
        Literal["session", "agent", "model", "variant"] | None,
        typer.Option(
            "--group-by",
            metavar="session|agent|model|variant",
            help="Profile per session, agent, model (set of models a session used) or "
            "variant.  [default: variant with --variant or --annotations, else agent]",
            show_default=False,
        ),
    ] = None,
    variant: Annotated[
        list[str] | None,
        typer.Option(
            "--variant",
            metavar="NAME=SELECTOR",
            help="A variant to compare (repeatable; the first is the baseline). "
            "SELECTOR: FIELD=GLOB or FIELD!=GLOB joined by commas; fields: agent, "
            "agent_version, model, tool, session, file, format, case, run_variant, "
            "meta.KEY.",
        ),
    ] = None,
    annotations: Annotated[
        list[Path] | None,
        typer.Option(
            "--annotations",
            metavar="FILE",
            help="Run annotations (JSON object, list or JSONL; repeatable). Needs --case-manifest.",
        ),
    ] = None,
    case_manifest: Annotated[
        Path | None,
        typer.Option(
            "--case-manifest", metavar="FILE", help="The cases the annotations name (JSON)."
        ),
    ] = None,
    prices: Annotated[
        Path | None,
        typer.Option(
            "--prices",
            metavar="FILE",
            help='Prices per million tokens by model (JSON: {"MODEL": '
            '{"input_per_million": X, "output_per_million": Y}}).',
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", metavar="FILE", help="Write the profile here (JSON)."),
    ] = None,
    format: FormatOption = None,
    tools: ToolsOption = None,
    recorded_model: RecordedModelOption = None,
    strict: StrictOption = False,
    as_markdown: Annotated[
        bool, typer.Option("--markdown", help="Print a short Markdown version, not a table.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the profile JSON instead of a table.")
    ] = False,
) -> None:
    """Profile agent loops: calls, times, gaps, tokens, failures and retries, per group."""
    variants = parse_variants(variant or [])
    chosen = group_by or ("variant" if variants or annotations else "agent")
    if variants and chosen != "variant":
        raise UserError(f"variants need --group-by variant, not {chosen}", "variants")
    if chosen == "variant" and not variants and not annotations:
        raise UserError(
            "variant needs --variant NAME=SELECTOR or "
            "--annotations (whose runs name their variant)",
            "group_by",
        )
    profiler = Profiler(
        chosen,
        variants,
        _annotations(annotations or [], case_manifest),
        load_prices(prices) if prices else None,
    )
    stream = session_stream(inputs, format, tools, recorded_model, strict)
    for session in stream:
        summary = stream.summaries[-1]
        profiler.add(session, summary.file, summary.format)
    result = profiler.result([_input(s) for s in stream.summaries])
    if output:
        write_document(output, result)
    if as_json:
        typer.echo(document_bytes(result).decode(), nl=False)
    elif as_markdown:
        typer.echo(markdown(result), nl=False)
    else:
        _print(result, output)


def _annotations(paths: list[Path], manifest: Path | None) -> dict[str, RunAnnotation]:
    """Each annotated session's run annotation, from every annotation file."""
    if not paths:
        if manifest:
            load_manifest(manifest)  # validate it even when nothing refers to it
        return {}
    if manifest is None:
        raise UserError("needs --case-manifest FILE: the cases the annotations name", "annotations")
    cases = load_manifest(manifest)
    return sessions_by_id(
        [(path, annotation) for path in paths for annotation in load_annotations(path, cases)]
    )


def _input(summary: InputSummary) -> InputRead:
    """What was read from one input."""
    return InputRead(
        file=summary.file,
        format=summary.format,
        sessions=summary.sessions,
        duplicate_sessions=summary.duplicate_sessions,
        steps=dict(sorted(summary.steps.items())),
        skips=dict(sorted(summary.skips.counts.items())),
    )


def _print(result: Profile, output: Path | None) -> None:
    """The summary tables and the notes on what is not available."""
    console = Console(highlight=False)
    for table in tables(result):
        console.print(_rich(table))
    found = notes(result)
    if found:
        console.print(LEGEND, markup=False)
        console.print("not available:", markup=False)
        for note in found:
            console.print(f"  {note}", markup=False)
    if output:
        console.print(f"wrote the profile to {output}", markup=False)


def _rich(table: Table) -> RichTable:
    """A summary table as a rich table: labels left, numbers right."""
    rendered = RichTable(title=table.title, title_justify="left")
    for header in table.headers:
        rendered.add_column(header, justify="left" if header in LABELS else "right")
    for row in table.rows:
        rendered.add_row(*row)
    return rendered
