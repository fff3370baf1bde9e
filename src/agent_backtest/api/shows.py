"""``show()``: one session or unit of a file in full, the list to choose from, or how each of a
trace file's records was read."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from agent_backtest.api.options import PathLike, ReadingOptions
from agent_backtest.api.units import read_sessions
from agent_backtest.errors import InputError
from agent_backtest.formats import InputSummary, explain
from agent_backtest.formats.base import SpanReading
from agent_backtest.formats.registry import local_input
from agent_backtest.redaction import mask_secrets
from agent_backtest.trace import Session
from agent_backtest.units import Unit, is_units_file, read_units_file

__all__ = ["InputSummary", "Session", "Shown", "SpanReading", "Unit", "show"]

Record = TypeVar("Record", Session, Unit)


@dataclass(frozen=True)
class Shown:
    """What :func:`show` found: the sessions or the units asked for, or the file's readings."""

    file: Path
    sessions: list[Session] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)
    explanation: InputSummary | None = None
    """With ``explain``: every span or observation, the step it became and why it gave no unit."""
    single: bool = False
    """True when the one session or unit found is to be shown in full (else: a list)."""


def show(
    file: PathLike,
    *,
    session: str | None = None,
    unit: str | None = None,
    explain_records: bool = False,
    reading: ReadingOptions | None = None,
    show_secrets: bool = False,
) -> Shown:
    """The sessions of a trace file (or the units of a units JSONL), kept by ``session`` (and
    ``unit``) id; one found, or an id given, is to be shown in full, with values shaped like
    credentials (a key pasted into a message) as ``[redacted]`` unless ``show_secrets``. With
    ``explain_records``, how each span or observation of a trace file was read instead.
    Nothing found fails with the ids the file holds."""
    shown = _found(file, session, unit, explain_records, reading or ReadingOptions())
    if show_secrets or not shown.single:
        return shown
    sessions, units = [_masked(s) for s in shown.sessions], [_masked(u) for u in shown.units]
    return replace(shown, sessions=sessions, units=units)


def _masked(record: Record) -> Record:
    """``record`` with its values shaped like credentials masked (no such value holds a
    character JSON escapes, so its JSON text is masked and read back)."""
    return type(record).model_validate_json(mask_secrets(record.model_dump_json()))


def _found(
    file: PathLike,
    session: str | None,
    unit: str | None,
    explain_records: bool,
    reading: ReadingOptions,
) -> Shown:
    """What :func:`show` shows, as the file holds it."""
    path = local_input(Path(file))  # a pipe is read once
    if is_units_file(path):
        if explain_records:
            raise InputError(path, None, "--explain reads trace files; this is a units file")
        return _units(path, unit or None, session)
    if unit:
        raise InputError(path, None, "--unit needs a units file (from abt units)")
    if explain_records:
        return Shown(path, explanation=explain(path, reading.read_options(), reading.format))
    sessions = list(read_sessions([path], reading))
    chosen = [s for s in sessions if session is None or s.id == session]
    if not chosen:
        raise InputError(path, None, _nothing_found(path, session, sessions))
    return Shown(path, sessions=chosen, single=len(chosen) == 1 or session is not None)


def _units(path: Path, unit_id: str | None, session: str | None) -> Shown:
    units = [
        u
        for u in read_units_file(path)
        if (unit_id is None or u.unit_id == unit_id)
        and (session is None or u.session_id == session)
    ]
    if not units:
        held = list(read_units_file(path))
        ids = ", ".join(u.unit_id for u in held[:5]) + (", …" if len(held) > 5 else "")
        raise InputError(path, None, f"no matching unit; the file holds {len(held)}: {ids}")
    return Shown(path, units=units, single=len(units) == 1 or unit_id is not None)


def _nothing_found(file: Path, session: str | None, sessions: list[Session]) -> str:
    """Why no session is shown, and what to do instead."""
    if session is None:
        return f"no sessions: no record could be used; abt show {file} --explain says why"
    ids = ", ".join(s.id for s in sessions[:5]) + (", …" if len(sessions) > 5 else "")
    return f"no session {session!r}; the file holds {len(sessions)}: {ids}"
