"""``abt profile``: where an agent loop spends its calls and time, per group, from its traces."""

from __future__ import annotations

from contextlib import nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer

from agent_backtest import api
from agent_backtest.api import ReadingOptions
from agent_backtest.cli.flags import flag, with_groups
from agent_backtest.cli.options import INPUTS, OUTPUT, SELECTION, Inputs
from agent_backtest.cli.output import STDOUT
from agent_backtest.cli.status import PhaseStatus
from agent_backtest.cli.terminal import SafeConsole, one_line

if TYPE_CHECKING:
    from rich.table import Table as RichTable

    from agent_backtest.api.profiles import Profile
    from agent_backtest.cli.profile_tables import Table

LONG_READ_BYTES = 32 * 2**20
"""Inputs from this size on take seconds to read, and say so while they are read."""

LABELS = frozenset({"group", "tool", "model", "figure", "variant"})


@dataclass
class ProfileFlags:
    """How sessions are grouped, what else is read about them, and how the profile is given."""

    group_by: Literal["session", "agent", "model", "variant"] | None = field(
        default=None, metadata=flag(SELECTION, "session|agent|model|variant", show_default=False)
    )
    """Profile per session, agent, model (set of models a session used) or variant.  [default:
    variant with --variant or --annotations, else agent]"""
    variant: list[str] | None = field(default=None, metadata=flag(SELECTION, "NAME=SELECTOR"))
    """A variant to compare (repeatable; the first is the baseline). SELECTOR: FIELD=GLOB or
    FIELD!=GLOB joined by commas; fields: agent, agent_version, model, tool, session, file,
    format, case, run_variant, meta.KEY."""
    annotations: list[Path] | None = field(default=None, metadata=flag(INPUTS, "FILE"))
    """Run annotations (JSON object, list or JSONL; repeatable). Needs --case-manifest."""
    case_manifest: Path | None = field(default=None, metadata=flag(INPUTS, "FILE"))
    """The cases the annotations name (JSON)."""
    prices: Path | None = field(default=None, metadata=flag(INPUTS, "FILE"))
    """Prices per million tokens by model (JSON: {"MODEL": {"input_per_million": X,
    "output_per_million": Y}})."""
    output: Path | None = field(default=None, metadata=flag(OUTPUT, "FILE", flag="-o --output"))
    """Write the profile here (JSON; - for stdout)."""
    as_markdown: bool = field(default=False, metadata=flag(OUTPUT, flag="--markdown"))
    """Print a short Markdown version, not a table."""
    as_json: bool = field(default=False, metadata=flag(OUTPUT, flag="--json"))
    """Print the profile JSON instead of a table."""


@with_groups()
def profile(reading: ReadingOptions, flags: ProfileFlags, inputs: Inputs) -> None:
    """Profile agent loops: calls, times, gaps, tokens, failures and retries, per group."""
    reading_status = (
        PhaseStatus(
            SafeConsole(stderr=True, highlight=False),
            None,
            lambda: f"profile: still reading {len(inputs)} input(s)",
        )
        if _long_to_read(inputs)
        else nullcontext()
    )
    with reading_status:
        result = api.profile(
            inputs,
            group_by=flags.group_by,
            variants=flags.variant or [],
            annotations=flags.annotations or [],
            case_manifest=flags.case_manifest,
            prices=flags.prices,
            reading=reading,
        )
    # Loaded with a profile, not with the command line: the profile's figure types come along.
    from agent_backtest.api.profiles import profile_document, write_profile
    from agent_backtest.cli.profile_markdown import markdown

    output = flags.output
    if output == STDOUT:
        typer.echo(profile_document(result).decode(), nl=False)
        return
    if output:
        write_profile(result, output)
    if flags.as_json:
        typer.echo(profile_document(result).decode(), nl=False)
    elif flags.as_markdown:
        typer.echo(markdown(result), nl=False)
    else:
        _print(result, output)


def _long_to_read(inputs: list[Path]) -> bool:
    """Inputs big enough that reading them may outlast a person's patience (a million steps
    take half a minute), so the read says it is still going; a small read stays silent, and a
    mistake found after it stays the one line that reports it."""
    total = 0
    for path in inputs:
        with suppress(OSError):  # what cannot be read is reported by the read itself
            total += path.stat().st_size if path.is_file() else 0
    return total >= LONG_READ_BYTES


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
        console.print(one_line(f"wrote the profile to {output}"), markup=False)


def _rich(table: Table) -> RichTable:
    """A summary table as a rich table: labels left, numbers right."""
    from rich.table import Table as RichTable

    rendered = RichTable(title=table.title, title_justify="left")
    for header in table.headers:
        rendered.add_column(header, justify="left" if header in LABELS else "right")
    for row in table.rows:
        rendered.add_row(*row)
    return rendered
