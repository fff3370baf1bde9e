"""Helpers that write OTLP/JSON by hand, following the proto JSON mapping, for reader tests."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

BASE_NS = 1_700_000_000_000_000_000


def any_value(value: Any) -> dict[str, Any]:
    """A plain value as an OTLP AnyValue; integers as strings, as the 64-bit mapping allows."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [any_value(item) for item in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": attributes(value)}}
    raise TypeError(value)


def attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    """A dict as a list of ``{key, value}`` attributes."""
    return [{"key": key, "value": any_value(value)} for key, value in values.items()]


def b64(hex_id: str) -> str:
    """A hex id in the proto JSON mapping's base64 form."""
    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def span(
    trace_id: str,
    span_id: str,
    name: str,
    attrs: dict[str, Any],
    *,
    parent: str | None = None,
    start_ms: int = 0,
    end_ms: int | None = None,
    events: list[tuple[str, dict[str, Any]]] = (),
    kind: Any = "SPAN_KIND_CLIENT",
    status: Any = None,
) -> dict[str, Any]:
    """One OTLP/JSON span; times are milliseconds after a fixed base, as nanosecond strings."""
    raw: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "kind": kind,
        "startTimeUnixNano": str(BASE_NS + start_ms * 1_000_000),
        "endTimeUnixNano": str(
            BASE_NS + (end_ms if end_ms is not None else start_ms + 5) * 1_000_000
        ),
        "attributes": attributes(attrs),
    }
    if parent:
        raw["parentSpanId"] = parent
    if events:
        raw["events"] = [
            {
                "name": name_,
                "timeUnixNano": str(BASE_NS + start_ms * 1_000_000),
                "attributes": attributes(values),
            }
            for name_, values in events
        ]
    if status is not None:
        raw["status"] = status
    return raw


def traces_data(
    spans: list[dict[str, Any]], service: str = "weather-agent", scope_key: str = "scopeSpans"
) -> dict[str, Any]:
    """A TracesData document holding the spans under one resource and one scope."""
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": attributes({"service.name": service, "service.version": "1.2.0"})
                },
                scope_key: [{"scope": {"name": "test-instrumentation"}, "spans": spans}],
            }
        ]
    }


def write_lines(path: Path, documents: list[dict[str, Any]]) -> Path:
    """A JSON Lines file, one TracesData per line (the collector's file exporter form)."""
    path.write_text("".join(json.dumps(doc) + "\n" for doc in documents))
    return path


def write_document(path: Path, document: dict[str, Any]) -> Path:
    """One pretty-printed TracesData document."""
    path.write_text(json.dumps(document, indent=2))
    return path
