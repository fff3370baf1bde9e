"""Command-line arguments shared by every command that reads traces."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

Inputs = Annotated[
    list[Path],
    typer.Argument(
        metavar="INPUT",
        help="Trace files in any supported format (detected from the content).",
        show_default=False,
    ),
]
