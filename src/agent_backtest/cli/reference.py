"""The README's command reference, generated from ``--help`` so it cannot drift.

``python -m agent_backtest.cli.reference README.md`` rewrites the reference in place; a test
checks that the README matches what the commands print.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from typer.testing import CliRunner

from agent_backtest.cli.app import COMMANDS, Group, app

WIDTH = 100
BEGIN = "<!-- command reference: generated from --help, do not edit -->"
END = "<!-- end of command reference -->"


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


def render() -> str:
    """The whole reference section as Markdown."""
    blocks = [
        f"### `abt {' '.join(path)}`\n\n```text\n{help_text(*path)}```\n"
        for path in command_paths()
    ]
    return f"{BEGIN}\n\n```text\n{help_text()}```\n\n" + "\n".join(blocks) + f"\n{END}"


def update(readme: Path) -> bool:
    """Rewrite the reference in ``readme``; True when it changed."""
    text = readme.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.DOTALL)
    if not pattern.search(text):
        raise SystemExit(f"{readme}: no command reference markers ({BEGIN})")
    new = pattern.sub(lambda _: render(), text)
    readme.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    update(Path(sys.argv[1] if len(sys.argv) > 1 else "README.md"))
