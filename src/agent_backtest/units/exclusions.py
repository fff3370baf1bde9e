"""Sessions to leave out (``--exclude-sessions``), read from any file that names sessions.

Accepted: a run directory (the sessions of its ``units.jsonl``), a file of ids (one per line,
``#`` comments), a JSONL whose lines carry a ``session_id`` (units, results, scores) or are
sessions, a ``results.csv`` as ``abt report`` writes it (its ``session`` column), and a JSON
document of sessions: a list of session objects or of ids, or an object whose ``sessions`` key
holds either.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from agent_backtest.errors import InputError
from agent_backtest.input_files import decode_text, read_bytes

CSV_SESSION_COLUMN = "session"
# ``abt report`` puts an apostrophe before trace text that a spreadsheet would run as a formula;
# the id is the text after it.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A results.csv cell can hold a long answer; the csv module refuses fields over 128 KiB.
CSV_FIELD_LIMIT = 2**31 - 1


@dataclass(frozen=True)
class ExcludedSessions:
    """The sessions an exclusion file names, and the file (as given) that named them."""

    file: str
    ids: frozenset[str]


def read_session_ids(path: Path) -> ExcludedSessions:
    """The sessions a file names; a file that cannot be read names the place that is wrong."""
    source = path / "units.jsonl" if path.is_dir() else path
    text = decode_text(read_bytes(source, "list of excluded sessions"), source, "file")
    return ExcludedSessions(str(path), frozenset(_ids_of(source, text)))


def _ids_of(path: Path, text: str) -> set[str]:
    """The ids of the file's text, read as the kind of file it is."""
    start = text.lstrip()[:1]
    if start in ("[", "{"):
        try:
            document = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            if start == "[":
                raise InputError(
                    path, f"line {exc.lineno} column {exc.colno}", f"not valid JSON ({exc.msg})"
                ) from None
            return _line_ids(path, text)  # JSON Lines: one record per line
        return _document_ids(path, document)
    if _is_results_csv(text):
        return _csv_ids(path, text)
    if path.suffix.lower() == ".csv":
        raise InputError(
            path, "line 1", "a CSV needs a session column (as abt report writes results.csv)"
        )
    return _line_ids(path, text)


def _line_ids(path: Path, text: str) -> set[str]:
    """Ids one per line, or JSON records one per line; blank lines and ``#`` comments skipped."""
    ids = set()
    # Split on newlines only: str.splitlines would also break a record at U+2028 or U+0085,
    # which JSON writers leave unescaped inside strings.
    for number, line in enumerate(text.split("\n"), start=1):
        value = line.strip()
        if not value or value.startswith("#"):
            continue
        if value.startswith("{"):
            try:
                record = orjson.loads(value)
            except orjson.JSONDecodeError:
                raise InputError(path, f"line {number}", "not valid JSON") from None
            ids.add(_record_id(path, f"line {number}", record))
        else:
            ids.add(value)
    return ids


def _record_id(path: Path, location: str, record: Any) -> str:
    """The session of a units, results or scores record, or the id of a session record."""
    if isinstance(record, dict):
        if isinstance(record.get("session_id"), str):
            return record["session_id"]
        if str(record.get("schema", "")).startswith("abt.session/") and isinstance(
            record.get("id"), str
        ):
            return record["id"]
    raise InputError(
        path,
        location,
        "a JSON line needs a session_id (a units or results file) or an id (a sessions file)",
    )


def _document_ids(path: Path, document: Any) -> set[str]:
    """The ids of a JSON document of sessions (or of a single JSON record)."""
    items, base = document, "$"
    if isinstance(document, dict):
        if "sessions" not in document:
            return {_record_id(path, "$", document)}
        items, base = document["sessions"], "$.sessions"
    if not isinstance(items, list):
        raise InputError(path, base, "expected a list of session ids or session objects")
    return {_item_id(path, f"{base}[{index}]", item) for index, item in enumerate(items)}


def _item_id(path: Path, location: str, item: Any) -> str:
    """One item of a sessions list: an id, or a session object's ``session_id`` or ``id``."""
    if isinstance(item, str) and item:
        return item
    if isinstance(item, dict):
        for key in ("session_id", "id"):
            value = item.get(key)
            if isinstance(value, str) and value:
                return value
            if isinstance(value, int) and not isinstance(value, bool):
                return str(value)  # as the session reader names a numeric session_id
    raise InputError(
        path, location, "expected a session id, or a session object with a session_id or id"
    )


def _is_results_csv(text: str) -> bool:
    """True when the first line is a results.csv header (unit_id and session columns)."""
    header = next(csv.reader(io.StringIO(text.split("\n", 1)[0])), [])
    return "unit_id" in header and CSV_SESSION_COLUMN in header


def _csv_ids(path: Path, text: str) -> set[str]:
    """The session column of a results.csv; its cells may span lines."""
    previous_limit = csv.field_size_limit(CSV_FIELD_LIMIT)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
        ids = set()
        try:
            for row in reader:
                value = row.get(CSV_SESSION_COLUMN)
                if not value:
                    raise InputError(
                        path, f"line {reader.line_num}", "the row has no session (column session)"
                    )
                ids.add(_unneutralised(value))
        except csv.Error as exc:
            # The line being parsed when it failed is the one after those read whole.
            raise InputError(
                path, f"line {reader.line_num + 1}", f"not valid CSV ({exc})"
            ) from None
        return ids
    finally:
        csv.field_size_limit(previous_limit)


def _unneutralised(value: str) -> str:
    """A cell's text without the apostrophe that kept a formula-like id as text."""
    if value.startswith("'") and value[1:].startswith(FORMULA_STARTS):
        return value[1:]
    return value
