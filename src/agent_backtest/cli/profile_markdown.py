"""The short Markdown version of a profile: the summary tables and the availability notes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_backtest.cli.profile_tables import LEGEND, Table, notes, tables

if TYPE_CHECKING:
    from agent_backtest.api.profiles import Profile


def markdown(profile: Profile) -> str:
    """The profile's summary as Markdown."""
    parts = [f"# Agent loop profile (by {profile.group_by})\n"]
    parts.extend(_table(table) for table in tables(profile))
    found = notes(profile)
    if found:
        parts.append(f"## Not available\n\n{LEGEND}\n\n" + "".join(f"- {n}\n" for n in found))
    return "\n".join(parts)


def _table(table: Table) -> str:
    """One table as a Markdown pipe table under a heading."""
    lines = [
        f"## {table.title}\n",
        "| " + " | ".join(table.headers) + " |",
        "|" + "|".join("---" for _ in table.headers) + "|",
    ]
    lines.extend(
        "| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in table.rows
    )
    return "\n".join(lines) + "\n"
