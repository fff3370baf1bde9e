"""Converters from the shapes public test code keeps spans in to OTLP/JSON, for the corpus.

Three shapes: a ``resourceSpans`` entry as protobufjs decodes an OTLP export in JavaScript (ids
as ``{"type": "Buffer", "data": [...]}``, 64-bit numbers as ``Long`` objects ``{low, high,
unsigned}``); a bare dict of one span's attributes (a recorded attribute sample); and a list of
``{name, attributes}`` spans, as a test asserts a span's name and its whole attribute dict (a
Python assertion or a snapshot). Each becomes a ``TracesData`` document that the OTLP reader
reads like a collector's export.

Logfire's test snapshots show JSON attributes parsed (``parse_json_attributes=True``); Logfire
exports them as JSON text, as its ``logfire.json_schema`` says: an attribute that schema types
(``object``, ``array``), and any value OTel cannot carry (an object, a list of objects), is
written back as its JSON text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.formats.otlp_json import attributes, span, traces_data

SOURCES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "otlp"
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"


def from_protobufjs(resource_spans: dict[str, Any]) -> dict[str, Any]:
    """A protobufjs-decoded ``ResourceSpans`` as a proto-JSON ``TracesData``."""
    return {"resourceSpans": [_converted(resource_spans)]}


def from_attributes(values: dict[str, Any], name: str) -> dict[str, Any]:
    """One span's recorded attributes as a TracesData holding that span alone."""
    recorded = span(TRACE_ID, "b7ad6b7169203331", name, {})
    recorded["attributes"] = attributes(values)
    return traces_data([recorded], service="recorded-sample")


def from_asserted_spans(asserted: list[dict[str, Any]]) -> dict[str, Any]:
    """Spans as a test asserts them (name and attributes), in order, as one trace's spans with
    fixed ids: the test holds no ids, and the order is the order the spans were recorded in."""
    recorded = []
    for index, item in enumerate(asserted, start=1):
        one = span(TRACE_ID, f"{index:016x}", item["name"], {}, start_ms=index * 10)
        values = item["attributes"]
        if "logfire.json_schema" in values:
            values = _as_logfire_exports(values)
        one["attributes"] = attributes(values)
        recorded.append(one)
    return traces_data(recorded, service="recorded-sample")


def _as_logfire_exports(values: dict[str, Any]) -> dict[str, Any]:
    """A Logfire span's parsed attributes with the JSON ones back as the text it exports."""
    typed = values["logfire.json_schema"].get("properties", {})
    exported = {}
    for key, value in values.items():
        nested = isinstance(value, dict) or (
            isinstance(value, list) and any(isinstance(item, dict) for item in value)
        )
        if "type" in typed.get(key, {}) or nested:
            value = json.dumps(value, separators=(",", ":"))
        exported[key] = value
    return exported


def _converted(value: Any) -> Any:
    """Buffers as hex, Longs as decimal strings, everything else as it is."""
    if isinstance(value, dict):
        if value.get("type") == "Buffer" and isinstance(value.get("data"), list):
            return bytes(value["data"]).hex()
        if set(value) == {"low", "high", "unsigned"}:
            return str(((value["high"] & 0xFFFFFFFF) << 32) | (value["low"] & 0xFFFFFFFF))
        return {key: _converted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_converted(item) for item in value]
    return value


def build(source: Path) -> dict[str, Any]:
    """The TracesData of one ``*.source.json`` (see PROVENANCE.md for its shape)."""
    recorded = json.loads(source.read_text())
    if isinstance(recorded, list):
        return from_asserted_spans(recorded)
    if "scopeSpans" in recorded:
        return from_protobufjs(recorded)
    return from_attributes(recorded, str(recorded.get("ai.operationId", "span")))


def main() -> None:
    """Write each source's ``*.trace.json`` beside it: ``python -m tests.formats.otlp_sources``."""
    for source in sorted(SOURCES.glob("*.source.json")):
        target = source.with_name(source.name.replace(".source.json", ".trace.json"))
        target.write_text(json.dumps(build(source), indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
