"""``abt profile``: where an agent loop spends its calls and time, per group, from its traces."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.table import Table as RichTable

from agent_backtest import api
from agent_backtest.api import ReadingOptions
from agent_backtest.cli.flags import with_groups
from agent_backtest.cli.options import Inputs
from agent_backtest.cli.output import STDOUT
from agent_backtest.cli.terminal import SafeConsole

if TYPE_CHECKING:
    from agent_backtest.api.profiles import Profile
    from agent_backtest.cli.profile_tables import Table

LABELS = frozenset({"group", "tool", "model", "figure", "variant"})


@with_groups(reading=ReadingOptions)
def profile(
    reading: ReadingOptions,
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
        typer.Option(
            "-o", "--output", metavar="FILE", help="Write the profile here (JSON; - for stdout)."
        ),
    ] = None,
    as_markdown: Annotated[
        bool, typer.Option("--markdown", help="Print a short Markdown version, not a table.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the profile JSON instead of a table.")
    ] = False,
) -> None:
    """Profile agent loops: calls, times, gaps, tokens, failures and retries, per group."""
    result = api.profile(
        inputs,
        group_by=group_by,
        variants=variant or [],
        annotations=annotations or [],
        case_manifest=case_manifest,
        prices=prices,
        reading=reading,
    )
    # Loaded with a profile, not with the command line: the profile's figure types come along.
    from agent_backtest.api.profiles import profile_document, write_profile
    from agent_backtest.cli.profile_markdown import markdown

    if output == STDOUT:
        typer.echo(profile_document(result).decode(), nl=False)
        return
    if output:
        write_profile(result, output)
    if as_json:
        typer.echo(profile_document(result).decode(), nl=False)
    elif as_markdown:
        typer.echo(markdown(result), nl=False)
    else:
        _print(result, output)


def _print(result: Profile, output: Path | None) -> None:
    """The summary tables and the notes on what is not available."""
    from agent_backtest.cli.profile_tables import LEGEND, notes, tables

    console = SafeConsole(highlight=False)
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
