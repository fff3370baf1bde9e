"""The demo agent's data: notes and calendar events in one SQLite file, and the tools on them.

Every tool takes its arguments as the model sent them and returns plain data (sent back to the
model as JSON), or raises ``ToolError`` with a message the model can act on.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    starts_at TEXT NOT NULL,
    minutes INTEGER NOT NULL DEFAULT 60
);
"""
SAMPLE_NOTES = [("Japan trip", "Book the ryokan in Kyoto."), ("Groceries", "Milk, eggs, rice.")]
SAMPLE_EVENTS = [("Dentist", "2026-03-02T09:30", 30), ("Team lunch", "2026-03-03T12:00", 90)]


class ToolError(Exception):
    """A tool call that cannot be done as asked; its message goes back to the model."""


def open_db(path: Path) -> sqlite3.Connection:
    """A connection to the database at ``path``, made with its tables (and sample rows) when new."""
    new = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)  # runs/ of a fresh checkout does not exist yet
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    db.executescript(SCHEMA)
    if new:
        db.executemany("INSERT INTO notes (title, body) VALUES (?, ?)", SAMPLE_NOTES)
        db.executemany(
            "INSERT INTO events (title, starts_at, minutes) VALUES (?, ?, ?)", SAMPLE_EVENTS
        )
        db.commit()
    return db


def list_notes(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every note."""
    return [dict(row) for row in db.execute("SELECT id, title, body FROM notes ORDER BY id")]


def add_note(db: sqlite3.Connection, title: str, body: str = "") -> dict[str, Any]:
    """Save a note; its id."""
    if not title.strip():
        raise ToolError("a note needs a title")
    cursor = db.execute("INSERT INTO notes (title, body) VALUES (?, ?)", (title, body))
    db.commit()
    return {"id": cursor.lastrowid, "title": title}


def delete_note(db: sqlite3.Connection, id: int) -> dict[str, Any]:
    """Delete a note by id."""
    if db.execute("DELETE FROM notes WHERE id = ?", (id,)).rowcount == 0:
        raise ToolError(f"there is no note {id}: list_notes gives the ids")
    db.commit()
    return {"deleted": id}


def list_events(db: sqlite3.Connection, day: str | None = None) -> list[dict[str, Any]]:
    """The events of one day (YYYY-MM-DD), or all, in time order."""
    query, parameters = "SELECT id, title, starts_at, minutes FROM events", ()
    if day:
        query, parameters = query + " WHERE starts_at LIKE ?", (f"{day}T%",)
    return [dict(row) for row in db.execute(query + " ORDER BY starts_at", parameters)]


def add_event(
    db: sqlite3.Connection, title: str, starts_at: str, minutes: int = 60
) -> dict[str, Any]:
    """Put an event in the calendar; its id."""
    try:
        datetime.strptime(starts_at, "%Y-%m-%dT%H:%M")
    except ValueError:
        raise ToolError(f"starts_at {starts_at!r} is not YYYY-MM-DDTHH:MM") from None
    cursor = db.execute(
        "INSERT INTO events (title, starts_at, minutes) VALUES (?, ?, ?)",
        (title, starts_at, minutes),
    )
    db.commit()
    return {"id": cursor.lastrowid, "title": title, "starts_at": starts_at}


TOOLS: dict[str, Callable[..., Any]] = {
    "list_notes": list_notes,
    "add_note": add_note,
    "delete_note": delete_note,
    "list_events": list_events,
    "add_event": add_event,
}
