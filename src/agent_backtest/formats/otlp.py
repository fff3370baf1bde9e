"""Reader of OTLP/JSON traces: the collector's file exporter output, or one whole document.

The collector writes one ``TracesData`` (``{"resourceSpans": [...]}``) per line; a single
pretty-printed document is accepted too. The proto JSON mapping allows several spellings and
all are read: enum names or numbers (``"SPAN_KIND_CLIENT"``/``3``), 64-bit integers as strings,
ids in hex (any case) or base64, ``scopeSpans`` or the older ``instrumentationLibrarySpans``.

JSON Lines files are read so that memory follows the sessions open at one time, not the file:
a scan of the bytes notes the last line of each session, then each line is parsed, checked and
its spans buffered per session, and a session is handed on right after its last line. The scan
parses only a line whose bytes may not say which traces it holds (see :func:`_line_traces`).

Nesting is limited where the reader recurses (attribute values); orjson refuses deeper documents
itself, and the parts of a line the reader does not read are never walked.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from agent_backtest.errors import InputError, RecordError
from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.formats.jsonio import is_json_lines, iter_json_lines, iter_lines, load_json
from agent_backtest.formats.limits import MAX_DEPTH, too_deep_at
from agent_backtest.formats.span_model import Span, SpanEvent
from agent_backtest.formats.spans import SESSION_KEYS, build_session, group_spans
from agent_backtest.trace import Session

FORMAT = "otlp"
SPAN_KINDS = ("unspecified", "internal", "server", "client", "producer", "consumer")
STATUS_CODES = (None, "ok", "error")  # UNSET, OK, ERROR
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
EXPECTED = 'expected an OTLP/JSON TracesData object {"resourceSpans": [...]}'


def sniff(head: str, path: Path) -> bool:
    """True when the start of the file holds OTLP ``resourceSpans``."""
    return '"resourceSpans"' in head


def read(path: Path, options: ReadOptions, skips: SkipLog) -> Iterator[Session]:
    """Yield the file's sessions; JSON Lines in bounded memory, one document whole."""
    if is_json_lines(path):
        yield from _read_lines(path, skips)
    else:
        yield from _read_document(path, skips)


# --- whole document and JSON Lines ------------------------------------------------------------


def _read_document(path: Path, skips: SkipLog) -> Iterator[Session]:
    """Sessions of a single TracesData document, loaded whole."""
    data = load_json(path)
    _check_shape(data, path, None)
    spans = list(_decode_all(data, None, skips, path))
    for key, group in group_spans(spans).items():
        session = build_session(key, group, file=str(path), format=FORMAT, skips=skips)
        if session is not None:
            yield session


def _read_lines(path: Path, skips: SkipLog) -> Iterator[Session]:
    """Buffer spans per session line by line, and emit each session after its last line."""
    trace_session, ends_at = _last_lines(path)
    closing: dict[int, list[str]] = {}
    for key, line in ends_at.items():
        closing.setdefault(line, []).append(key)
    open_groups: dict[str, list[Span]] = {}
    for number, data in iter_json_lines(path, nesting=False):
        _check_shape(data, path, number)
        for span in _decode_all(data, number, skips, path):
            key = trace_session.get(span.trace_id, span.trace_id)
            open_groups.setdefault(key, []).append(span)
        for key in closing.pop(number, ()):
            group = open_groups.pop(key, None)
            if group:
                session = build_session(key, group, file=str(path), format=FORMAT, skips=skips)
                if session is not None:
                    yield session


def _last_lines(path: Path) -> tuple[dict[str, str], dict[str, int]]:
    """The session of each trace that records one, and the last line of each session, from a
    scan of the file before it is read.

    Sessions are keyed by session id, else by trace id; memory is one entry per trace.
    """
    trace_session: dict[str, str] = {}
    trace_last: dict[str, int] = {}
    for number, line in iter_lines(path):
        for trace_id, key in _line_traces(line):
            trace_last[trace_id] = number
            if key is not None and trace_id not in trace_session:
                trace_session[trace_id] = key
    ends_at: dict[str, int] = {}
    for trace_id, line in trace_last.items():
        key = trace_session.get(trace_id, trace_id)
        ends_at[key] = max(line, ends_at.get(key, 0))
    return trace_session, ends_at


# A "traceId" key with a string value. In JSON text a quote inside a string is escaped, so these
# bytes occur only where an object has that key (the spans', and other objects' such as links).
_TRACE_ID = re.compile(rb'"traceId"\s*:\s*"([^"]*)"')
# A \u escape of a printable ASCII character: a key or an id may be spelled with one.
_ESCAPED_ASCII = re.compile(rb"\\u00[2-7]")


def _line_traces(line: bytes) -> list[tuple[str, str | None]]:
    """(trace id, session id or None) of each span of a line, in order (spans whose bytes
    name their trace alike given once).

    Read from the bytes when they cannot differ from the parsed line: no span links (they name
    other traces), no session attribute (it groups traces), no key or id spelled with escapes.
    Any other line is parsed. A line that is not a TracesData value gives nothing here; reading
    it says what is wrong.
    """
    if b'"links"' in line or b"session.id" in line or _ESCAPED_ASCII.search(line):
        return _parsed_line_traces(line)
    found = _TRACE_ID.findall(line)
    if any(b"\\" in raw for raw in found):
        return _parsed_line_traces(line)
    traces = []
    for raw in dict.fromkeys(found):  # a trace's spans share a line: each id read once
        trace_id = _id_or_none(raw.decode("utf-8", "replace"), 16)
        if trace_id is not None:
            traces.append((trace_id, None))
    return traces


def _parsed_line_traces(line: bytes) -> list[tuple[str, str | None]]:
    """:func:`_line_traces` of a line that is parsed: its spans' trace and session ids."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        return []
    if not _is_traces_data(data):
        return []
    traces = []
    for raw in _raw_spans(data):
        trace_id = _id_or_none(raw.get("traceId"), 16)
        if trace_id is not None:  # reading the line logs the skip
            traces.append((trace_id, _raw_session_id(raw)))
    return traces


def _raw_session_id(raw: dict[str, Any]) -> str | None:
    """The session id attribute of an undecoded span (the scan reads no more)."""
    attributes = raw.get("attributes")
    if not isinstance(attributes, list):
        return None
    for item in attributes:
        if isinstance(item, dict) and item.get("key") in SESSION_KEYS:
            value = item.get("value")
            if isinstance(value, dict) and isinstance(value.get("stringValue"), str):
                return value["stringValue"] or None
    return None


def _is_traces_data(data: Any) -> bool:
    """True when :func:`_check_shape` finds nothing wrong with the value."""
    try:
        _check_shape(data, Path(), None)
    except InputError:
        return False
    return True


def _check_shape(data: Any, path: Path, line: int | None) -> None:
    """Fail with the line (or ``$``) when the value is not a TracesData object."""
    where = f"line {line}" if line is not None else "$"
    if not isinstance(data, dict) or not isinstance(data.get("resourceSpans"), list):
        got = "an object without resourceSpans" if isinstance(data, dict) else type(data).__name__
        raise InputError(path, where, f"{EXPECTED}, got {got}")
    for i, resource in enumerate(data["resourceSpans"]):
        if not isinstance(resource, dict):
            raise InputError(path, f"{where}, $.resourceSpans[{i}]", "expected an object")
        for j, scope in enumerate(_scopes(resource)):
            if not isinstance(scope, dict) or not isinstance(scope.get("spans", []), list):
                raise InputError(
                    path,
                    f"{where}, $.resourceSpans[{i}].scopeSpans[{j}]",
                    "expected an object with a spans list",
                )


def _scopes(resource: dict[str, Any]) -> list[Any]:
    """The scope groups of a resource, under the current or the older key."""
    scopes = resource.get("scopeSpans", resource.get("instrumentationLibrarySpans", []))
    return scopes if isinstance(scopes, list) else [scopes]


def _raw_spans(data: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The undecoded span objects of a TracesData value whose shape is checked."""
    for resource in data["resourceSpans"]:
        for scope in _scopes(resource):
            for raw in scope.get("spans", []):
                if isinstance(raw, dict):
                    yield raw


# --- decoding ---------------------------------------------------------------------------------


def _decode_all(
    data: dict[str, Any], line: int | None, skips: SkipLog, path: Path
) -> Iterator[Span]:
    """Every usable span of one TracesData; unusable ones are logged and left out."""
    try:
        yield from _decode_spans(data, line, skips)
    except _TooDeep:
        where = f"line {line} " if line is not None else ""
        raise InputError(
            path,
            where + (too_deep_at(data) or "$"),
            f"value too deep: nested more than {MAX_DEPTH} levels",
        ) from None


def _decode_spans(data: dict[str, Any], line: int | None, skips: SkipLog) -> Iterator[Span]:
    """The spans of :func:`_decode_all`, for it to say where one is nested too deep."""
    for i, resource in enumerate(data["resourceSpans"]):
        try:
            resource_attributes = attributes_of(_object(resource.get("resource")).get("attributes"))
        except RecordError:
            resource_attributes = {}  # a broken resource does not make its spans unusable
        scope_key = "scopeSpans" if "scopeSpans" in resource else "instrumentationLibrarySpans"
        for j, scope in enumerate(_scopes(resource)):
            scope_info = scope.get("scope", scope.get("instrumentationLibrary")) or {}
            scope_name = scope_info.get("name") if isinstance(scope_info, dict) else None
            for k, raw in enumerate(scope.get("spans", [])):
                place = (i, scope_key, j, k)
                try:
                    span = decode_span(raw, "")
                except RecordError as exc:
                    skips.record_error(exc, _location(raw, line, place))
                    continue
                # A decoded span's id is the one _location reads: said without reading it again.
                if line is not None:
                    span.location = f"line {line}, span {span.span_id}"
                else:
                    span.location = _location(raw, line, place)
                span.resource_attributes = resource_attributes
                span.scope = scope_name if isinstance(scope_name, str) else None
                yield span


def _location(raw: Any, line: int | None, place: tuple[int, str, int, int]) -> str:
    """Where a span is: line and span id for JSON Lines, else its JSON path (``place`` holds
    the resource, scope key, scope and span indexes, written out only when the path is)."""
    span_id = _id_or_none(raw.get("spanId"), 8) if isinstance(raw, dict) else None
    if line is not None and span_id:
        return f"line {line}, span {span_id}"
    i, scope_key, j, k = place
    path = f"$.resourceSpans[{i}].{scope_key}[{j}].spans[{k}]"
    if line is None:
        return f"{path} (span {span_id})" if span_id else path
    return f"line {line}, {path}"


def decode_span(raw: Any, location: str) -> Span:
    """One OTLP/JSON span as a :class:`Span`; a missing or mistyped field is a RecordError."""
    if not isinstance(raw, dict):
        raise RecordError("malformed_span", "a span must be an object")
    trace_id, span_id = raw.get("traceId"), raw.get("spanId")
    if not trace_id:
        raise RecordError("missing_field", "span has no traceId")
    if not span_id:
        raise RecordError("missing_field", "span has no spanId")
    name = raw.get("name", "")
    if not isinstance(name, str):
        raise RecordError("mistyped_field", f"name must be a string, got {type(name).__name__}")
    status = raw.get("status") or {}
    if not isinstance(status, dict):
        raise RecordError("mistyped_field", "status must be an object")
    message = status.get("message")
    parent_id = raw.get("parentSpanId")
    events = raw.get("events")
    return Span(
        trace_id=decode_id(trace_id, 16, "traceId"),
        span_id=decode_id(span_id, 8, "spanId"),
        parent_id=decode_id(parent_id, 8, "parentSpanId") if parent_id else None,
        name=name,
        location=location,
        kind=_named(raw.get("kind"), _SPAN_KIND_NAMES, SPAN_KINDS, "SPAN_KIND_", "kind"),
        started_at=decode_time(raw.get("startTimeUnixNano"), "startTimeUnixNano"),
        ended_at=decode_time(raw.get("endTimeUnixNano"), "endTimeUnixNano"),
        status=_named(
            status.get("code"), _STATUS_NAMES, STATUS_CODES, "STATUS_CODE_", "status.code"
        ),
        status_message=message if isinstance(message, str) and message else None,
        attributes=attributes_of(raw.get("attributes")),
        events=[] if events is None else [_event(event) for event in _list(events, "events")],
    )


def decode_id(value: Any, size: int, what: str) -> str:
    """A trace id (16 bytes) or span id (8 bytes), hex or base64, as lowercase hex."""
    if type(value) is str and len(value) == 2 * size and value.isalnum():
        try:  # the usual spelling, hex, taken without a call
            bytes.fromhex(value)
            return value.lower()
        except ValueError:
            pass
    found = _id_or_none(value, size)
    if found is None:
        raise RecordError(
            "mistyped_field", f"{what} must be {size} bytes in hex or base64, got {value!r}"
        )
    return found


def decode_time(value: Any, what: str) -> datetime | None:
    """Nanoseconds since the epoch (number or string) as UTC; 0 or missing is None."""
    if value is None:
        return None
    if type(value) is str and value.isdigit() and value.isascii():
        value = int(value)  # the usual spelling, taken without a strip
    elif isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RecordError("mistyped_field", f"{what} must be nanoseconds, got {value!r}")
    if value == 0:
        return None  # the proto default: not recorded
    try:
        return EPOCH + timedelta(microseconds=value // 1000)
    except OverflowError:
        raise RecordError("mistyped_field", f"{what} {value} is out of range") from None


class _TooDeep(Exception):
    """An attribute value nested past :data:`VALUE_LEVELS` levels."""


# Each level of an AnyValue is at least three levels of JSON ({"arrayValue": {"values": [...]}})
# and the attributes sit seven levels into a line at least, so a value this deep lies deeper
# than MAX_DEPTH in the line: the line is then walked once to name where.
VALUE_LEVELS = MAX_DEPTH // 3


def attributes_of(raw: Any, level: int = 0) -> dict[str, Any]:
    """A list of ``{key, value: AnyValue}`` as a plain dict; ``level`` is how many values
    enclose the list."""
    result = {}
    for item in _list(raw, "attributes"):
        if not isinstance(item, dict) or not isinstance(key := item.get("key"), str):
            raise RecordError("mistyped_field", "an attribute must be {key, value}")
        value = item.get("value")
        # Most attributes are strings: taken here without a call per attribute.
        if type(value) is dict and type(text := value.get("stringValue")) is str:
            result[key] = text
        else:
            result[key] = any_value(value, level)
    return result


def any_value(raw: Any, level: int = 0) -> Any:
    """An OTLP AnyValue as a plain value (bytes stay as their base64 text); ``level`` is how
    many values enclose it."""
    if level > VALUE_LEVELS:
        raise _TooDeep
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise RecordError("mistyped_field", "an attribute value must be an AnyValue object")
    if not raw:
        return None
    if "stringValue" in raw:
        return _typed(raw["stringValue"], str, "stringValue")
    if "boolValue" in raw:
        return _typed(raw["boolValue"], bool, "boolValue")
    if "intValue" in raw:
        return _int_value(raw["intValue"])
    if "doubleValue" in raw:
        return _double_value(raw["doubleValue"])
    if "arrayValue" in raw:
        values = _object(raw["arrayValue"]).get("values")
        return [any_value(value, level + 1) for value in _list(values, "arrayValue")]
    if "kvlistValue" in raw:
        return attributes_of(_object(raw["kvlistValue"]).get("values"), level + 1)
    if "bytesValue" in raw:
        return _typed(raw["bytesValue"], str, "bytesValue")
    raise RecordError("mistyped_field", f"unknown AnyValue {sorted(raw)}")


def _event(raw: Any) -> SpanEvent:
    """One span event."""
    if not isinstance(raw, dict):
        raise RecordError("mistyped_field", "a span event must be an object")
    name = raw.get("name", "")
    if not isinstance(name, str):
        raise RecordError("mistyped_field", "event name must be a string")
    return SpanEvent(
        name,
        decode_time(raw.get("timeUnixNano"), "event timeUnixNano"),
        attributes_of(raw.get("attributes")),
    )


def _id_or_none(value: Any, size: int) -> str | None:
    """An id of ``size`` bytes in hex (any case) or base64 as lowercase hex; else None."""
    if not isinstance(value, str):
        return None
    if len(value) == 2 * size:
        try:
            bytes.fromhex(value)
            return value.lower()
        except ValueError:
            pass
    try:
        decoded = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    return decoded.hex() if len(decoded) == size else None


def _enum(value: Any, names: tuple[str | None, ...], prefix: str, what: str) -> str | None:
    """An enum given as its number or its proto name, as a lowercase name (UNSET is None)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
        return names[value]
    if isinstance(value, str) and value.startswith(prefix):
        name = value.removeprefix(prefix).lower()
        if name == "unset":
            return None
        if name in names:
            return name
    raise RecordError("mistyped_field", f"{what} {value!r} is not a known value")


# Every spelling of the span kinds and status codes, by name and number, with what it means.
_SPAN_KIND_NAMES: dict[Any, str | None] = {
    **{number: name for number, name in enumerate(SPAN_KINDS)},
    **{f"SPAN_KIND_{name.upper()}": name for name in SPAN_KINDS},
}
_STATUS_NAMES: dict[Any, str | None] = {
    **{number: name for number, name in enumerate(STATUS_CODES)},
    **{f"STATUS_CODE_{(name or 'unset').upper()}": name for name in STATUS_CODES},
}


def _named(
    value: Any,
    table: dict[Any, str | None],
    names: tuple[str | None, ...],
    prefix: str,
    what: str,
) -> str | None:
    """:func:`_enum` of a value, looked up in ``table`` first (a boolean is not a number)."""
    if value is None:
        return None
    kind = type(value)
    if (kind is str or kind is int) and value in table:
        return table[value]
    return _enum(value, names, prefix, what)


def _int_value(value: Any) -> int:
    """An ``intValue``: a number, or a string since 64-bit integers are strings in JSON."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise RecordError("mistyped_field", f"intValue must be an integer, got {value!r}")


def _double_value(value: Any) -> float:
    """A ``doubleValue``: a number, or a string such as ``NaN``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):  # "NaN", "Infinity" and numbers as strings
        try:
            return float(value)
        except ValueError:
            pass
    raise RecordError("mistyped_field", f"doubleValue must be a number, got {value!r}")


def _typed(value: Any, kind: type, what: str) -> Any:
    """The value when it has the expected type, else a RecordError."""
    if isinstance(value, kind):
        return value
    raise RecordError("mistyped_field", f"{what} must be {kind.__name__}, got {value!r}")


def _list(value: Any, what: str) -> list[Any]:
    """A list field that may be missing."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError("mistyped_field", f"{what} must be a list")
    return value


def _object(value: Any) -> dict[str, Any]:
    """An object field that may be missing."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RecordError("mistyped_field", f"expected an object, got {type(value).__name__}")
    return value
