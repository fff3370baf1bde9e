"""OTLP trace requests as the collector's file exporter writes them: one ``TracesData`` of
OTLP/JSON per line.

A protobuf ``ExportTraceServiceRequest`` has the same fields as ``TracesData``; protobuf's own
JSON mapping gives camelCase names, 64-bit integers as strings and enum names, but bytes in
base64, where OTLP/JSON writes trace and span ids in hex. The ids are turned to hex here, so a
line reads as the collector would have written it.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def request_as_json(message: Any) -> dict[str, Any]:
    """A decoded ``ExportTraceServiceRequest`` as an OTLP/JSON ``TracesData`` object."""
    from google.protobuf import json_format

    data = json_format.MessageToDict(message)
    data.setdefault("resourceSpans", [])
    for span in spans_of(data):
        _hex_ids(span)
        for link in span.get("links", []):
            _hex_ids(link)
    return data


def spans_of(data: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every span object of an OTLP/JSON ``TracesData`` whose shape was checked."""
    for resource in data["resourceSpans"]:
        for scope in resource.get("scopeSpans", []):
            yield from scope.get("spans", [])


def is_traces_data(data: Any) -> bool:
    """True for an object with a ``resourceSpans`` list of scope groups that hold span lists."""
    if not isinstance(data, dict) or not isinstance(data.get("resourceSpans"), list):
        return False
    for resource in data["resourceSpans"]:
        if not isinstance(resource, dict) or not isinstance(resource.get("scopeSpans", []), list):
            return False
        for scope in resource.get("scopeSpans", []):
            if not isinstance(scope, dict) or not isinstance(scope.get("spans", []), list):
                return False
    return True


def span_count(data: dict[str, Any]) -> int:
    """How many spans an OTLP/JSON ``TracesData`` holds."""
    return sum(1 for _ in spans_of(data))


def _hex_ids(item: dict[str, Any]) -> None:
    for field in ID_FIELDS:
        value = item.get(field)
        if isinstance(value, str) and value:
            item[field] = base64.b64decode(value).hex()


def otlp_attributes(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    """A flat attribute mapping as OTLP/JSON key-value pairs (a null value is left out)."""
    return [
        {"key": key, "value": any_value(value)}
        for key, value in attributes.items()
        if value is not None
    ]


def any_value(value: Any) -> dict[str, Any]:
    """One JSON value as an OTLP/JSON ``AnyValue``."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [any_value(item) for item in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": otlp_attributes(value)}}
    return {"stringValue": str(value)}
