"""The docs' reference pages, generated from the command line itself so they cannot drift.

``python -m agent_backtest.cli.reference [FOLDER]`` writes ``commands.md`` (what every command's
``--help`` prints) and ``schemas.md`` (what ``abt schema`` prints) into FOLDER, by default
``docs/reference``; a test checks that both pages match what the code says today.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import orjson
from typer.testing import CliRunner

from agent_backtest.api.schemas import RECORDS
from agent_backtest.api.schemas import schema as record_schema
from agent_backtest.cli.app import COMMANDS, Group, app

WIDTH = 100
REGENERATE = "python -m agent_backtest.cli.reference"

COMMANDS_INTRO = f"""\
# Commands

What `abt --help` and each command's `--help` print, generated from the command line itself
(`{REGENERATE}` rewrites this page; a test fails when a command changes and this page does not).
Exit codes: 0 done, 1 a run that failed or a check that found problems, 2 a usage or input
mistake (one line naming the flag or file), 3 a bar of `abt gate` or `abt compare --max-drop`
not met, 130 and 143 a run stopped by Ctrl-C or SIGTERM.
"""

SCHEMAS_INTRO = f"""\
# Record schemas

Every file a run directory holds that is not a page or a spreadsheet is a versioned record
(`"schema": "abt.summary/3"`, …). This page is what `abt schema NAME` prints for each of them,
generated from the records' models (`{REGENERATE}` rewrites it; a test fails when a record
changes and this page does not). A record written by another version is refused with what to do.
"""


def command_paths() -> list[tuple[str, ...]]:
    """Every command that runs something, in the order ``abt --help`` lists them: ``("units",)``,
    and for a group each of its commands, ``("cache", "stats")``."""
    paths: list[tuple[str, ...]] = []
    for name, entry in COMMANDS.items():
        if isinstance(entry, Group):
            paths += [(name, sub) for sub in entry.commands]
        else:
            paths.append((name,))
    return paths


def help_text(*args: str) -> str:
    """What ``abt ARGS --help`` prints at a fixed width."""
    result = CliRunner().invoke(
        app, [*args, "--help"], terminal_width=WIDTH, env={"COLUMNS": str(WIDTH), "NO_COLOR": "1"}
    )
    return result.stdout.rstrip() + "\n"


def render_commands() -> str:
    """The command reference page as Markdown."""
    blocks = [f"## `abt`\n\n```text\n{help_text()}```\n"] + [
        f"## `abt {' '.join(path)}`\n\n```text\n{help_text(*path)}```\n" for path in command_paths()
    ]
    return COMMANDS_INTRO + "\n" + "\n".join(blocks)


def render_schemas() -> str:
    """The record schema page as Markdown: for each record, its purpose and its JSON Schema."""
    blocks = []
    for name, model in RECORDS.items():
        purpose = (model.__doc__ or "").strip().split("\n\n", 1)[0]
        document = orjson.dumps(
            record_schema(name), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
        ).decode()
        blocks.append(
            f"## `{name}`\n\n{' '.join(purpose.split())}\n\n"
            f"`abt schema {name}`:\n\n```json\n{document}\n```\n"
        )
    return SCHEMAS_INTRO + "\n" + "\n".join(blocks)


PAGES: dict[str, Callable[[], str]] = {
    "commands.md": render_commands,
    "schemas.md": render_schemas,
}


def update(folder: Path) -> list[Path]:
    """Rewrite every reference page in ``folder``; the pages that changed."""
    folder.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, render in PAGES.items():
        path = folder / name
        text = render()
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


def main(argv: list[str]) -> int:
    """Write the pages into the folder named by ``argv`` (default docs/reference); exit code."""
    folder = Path(argv[0] if argv else "docs/reference")
    if folder.is_file():
        print(f"{folder} is a file: name the folder of the reference pages", file=sys.stderr)
        return 2
    for page in update(folder):
        print(f"wrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
