"""The command line's arguments and single options, declared once and reused by name, and the
panels of --help every flag is listed under.

An argument or option here is an ``Annotated`` type that typer reads (``config_file: ConfigFile =
None``), built by ``argument`` or ``option``. Those several commands share are declared here;
one of a single command at the top of its module. A command with many flags of its own keeps
them in a group instead (see ``cli/flags.py``), as the library's settings are grouped.
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Annotated, Any

import typer

# The panels of --help, in the order they are printed (options in no panel come last).
INPUTS = "Inputs"
SELECTION = "Selection"
ROLES = "Models and roles"
CALLS = "Calls"
SCORING = "Scoring"
OUTPUT = "Output"
PANELS = (INPUTS, SELECTION, ROLES, CALLS, SCORING, OUTPUT)


LARGEST = 1_000_000_000
"""The bound of a number a flag takes where it names none tighter: a mistyped
``--limit 99999999999999999999`` is refused, not run."""
MAX_CONCURRENCY = 1024
"""The most calls or conversations in flight a flag asks for (each holds a connection)."""
MAX_SECONDS = 86_400.0
"""The longest wait a flag sets (a timeout, a poll interval): a day."""


def with_bounds(kind: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` of an option, with ``±LARGEST`` as the bounds it leaves out when ``kind`` is a
    number (optional or not)."""
    kinds = set(typing.get_args(kind) or (kind,)) - {type(None)}
    if not kinds or not kinds <= {int, float}:
        return spec
    return {"min": -LARGEST, "max": LARGEST, **spec}


def option(kind: Any, flags: str, panel: str, help: str, **spec: Any) -> Any:
    """An option typer reads from the annotation: ``flags`` (space-separated, such as
    ``"-o --output"``), its help and the panel it is listed under; ``spec`` is the rest of
    ``typer.Option`` (metavar, bounds: a number's are ``±LARGEST`` unless given)."""
    option = typer.Option(
        *flags.split(), help=help, rich_help_panel=panel, **with_bounds(kind, spec)
    )
    return Annotated[kind, option]


def argument(kind: Any, metavar: str, help: str) -> Any:
    """A positional argument, shown as ``metavar`` with its help and no default."""
    return Annotated[kind, typer.Argument(metavar=metavar, help=help, show_default=False)]


Inputs = argument(
    list[Path], "INPUT", "Trace files in any supported format (detected from the content)."
)
UnitsOrTraces = argument(
    list[Path] | None,
    "INPUT",
    "A units JSONL (from abt units) or trace files in any supported format.",
)
ReplayInputs = argument(
    list[str] | None,
    "INPUT",
    "A units JSONL (from abt units), trace files in any supported format, or "
    "phoenix://HOST:PORT/PROJECT (the project's spans, pulled first into OUT.phoenix.jsonl).",
)
CONFIG_FILE_HELP = (
    "Model config (abt.toml): endpoints, key variables, roles and aliases [default: ./abt.toml, "
    "else the user config dir]."
)
ConfigFile = option(Path | None, "--config", ROLES, CONFIG_FILE_HELP, metavar="FILE")
CacheDirectory = option(
    Path | None,
    "--cache-dir",
    CALLS,
    "Response cache [default: the user cache dir].",
    metavar="DIR",
)
JsonReport = option(bool, "--json", OUTPUT, "Print the report as JSON instead of a table.")
RequestsPerSecond = option(
    float, "--requests-per-second", CALLS, "At most N requests a second.", metavar="N"
)
ShowSecrets = option(
    bool,
    "--show-secrets",
    OUTPUT,
    "Show values shaped like credentials (sk-…, AKIA…, ghp_…, AIza…, JWTs, bearer tokens) in "
    "recorded messages as they are, instead of [redacted].",
)
