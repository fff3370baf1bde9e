"""Reader of Langfuse trace exports: ``{"trace": {...}, "observations": [...]}``.

A file holds one export, a list of them, or one per line. Each observation is a span: Langfuse
keeps the raw OpenTelemetry attributes under ``metadata.attributes``, so the same attribute
dialects and the same session builder as for OTLP apply. Langfuse moves the message payloads
out of the attributes into the observation's ``input``/``output``; they are kept on the span and
read, in any message shape, when no attribute dialect holds the call, and ``model``,
``usageDetails`` (with cached and reasoning tokens) and ``modelParameters`` fill what the
attributes lack. A ``GENERATION``, ``TOOL`` or ``AGENT`` observation is a step of that kind; a
plain ``SPAN`` takes its kind from its attributes.
The observation's ``version``, else the trace's ``version``, else the trace's ``release``, is the
agent version of a step whose attributes name none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_backtest.errors import InputError, RecordError
from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.formats.dialects import step_kind
from agent_backtest.formats.jsonio import (
    is_json_lines,
    iter_json_lines,
    json_text_value,
    load_json,
)
from agent_backtest.formats.span_model import Span
from agent_backtest.formats.spans import build_session, group_spans, version_text
from agent_backtest.trace import Session, ToolExecution
from agent_backtest.trace.models import StepKind

FORMAT = "langfuse"
TYPE_KINDS: dict[str, StepKind] = {"GENERATION": "llm", "TOOL": "tool", "AGENT": "agent"}
EXPORT_START = re.compile(r'\s*\[?\s*\{\s*"trace"\s*:\s*\{')
EXPECTED = 'expected a Langfuse trace export {"trace": {...}, "observations": [...]}'
# Langfuse modelParameters names → GenAI request attributes.
PARAMETERS = {
    "temperature": "gen_ai.request.temperature",
    "max_tokens": "gen_ai.request.max_tokens",
    "top_p": "gen_ai.request.top_p",
    "top_k": "gen_ai.request.top_k",
    "seed": "gen_ai.request.seed",
    "stop": "gen_ai.request.stop_sequences",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "choice.count": "gen_ai.request.choice.count",
}
# Langfuse usageDetails names → GenAI usage attributes, the first name found winning.
USAGE_DETAILS = {
    "input": "gen_ai.usage.input_tokens",
    "output": "gen_ai.usage.output_tokens",
    "input_cached_tokens": "gen_ai.usage.cache_read.input_tokens",
    "input_cache_read": "gen_ai.usage.cache_read.input_tokens",
    "cache_read_input_tokens": "gen_ai.usage.cache_read.input_tokens",
    "prompt_details.cache_read": "gen_ai.usage.cache_read.input_tokens",
    "output_reasoning": "gen_ai.usage.reasoning.output_tokens",
    "output_reasoning_tokens": "gen_ai.usage.reasoning.output_tokens",
    "completion_details.reasoning": "gen_ai.usage.reasoning.output_tokens",
}


def sniff(head: str, path: Path) -> bool:
    """True for a Langfuse export: a ``trace`` object first, or Langfuse's observation fields."""
    if '"resourceSpans"' in head:
        return False
    return bool(EXPORT_START.match(head)) or (
        '"observations"' in head and '"parentObservationId"' in head
    )


def read(path: Path, options: ReadOptions, skips: SkipLog) -> Iterator[Session]:
    """Yield one session per Langfuse session id (else per trace)."""
    spans: list[Span] = []
    for location, export in _exports(path):
        spans.extend(_export_spans(export, location, path, skips))
    for key, group in group_spans(spans).items():
        session = build_session(key, group, file=str(path), format=FORMAT, skips=skips)
        if session is not None:
            yield session


def _exports(path: Path) -> Iterator[tuple[str, Any]]:
    """(location, export) for each export in the file."""
    if is_json_lines(path):
        for number, value in iter_json_lines(path):
            yield from _items(value, f"line {number}")
    else:
        yield from _items(load_json(path), "$")


def _items(value: Any, location: str) -> Iterator[tuple[str, Any]]:
    """The exports of one JSON value: the value itself, or each item of a list."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield f"{location}[{index}]" if location == "$" else f"{location}, $[{index}]", item
    else:
        yield location, value


def _export_spans(export: Any, location: str, path: Path, skips: SkipLog) -> Iterator[Span]:
    """The spans of one export; unusable observations are logged as skips."""
    trace, observations = _trace_and_observations(export)
    if trace is None or observations is None:
        raise InputError(path, location, EXPECTED)
    session_id = trace.get("sessionId") if isinstance(trace.get("sessionId"), str) else None
    for index, raw in enumerate(observations):
        where = _location(location, index, raw)
        try:
            span = observation_span(raw, trace, where)
        except RecordError as exc:
            skips.record_error(exc, where)
            continue
        span.session_id = session_id or None
        yield span


def _trace_and_observations(export: Any) -> tuple[dict[str, Any] | None, list[Any] | None]:
    """The trace object and the observation list of an export."""
    if not isinstance(export, dict):
        return None, None
    trace = export.get("trace")
    if trace is None and "observations" in export and "id" in export:
        trace = export  # the API's trace object, observations inside
    if not isinstance(trace, dict):
        return None, None
    observations = export.get("observations", trace.get("observations"))
    return trace, observations if isinstance(observations, list) else None


def _location(location: str, index: int, raw: Any) -> str:
    """Where an observation is: line or JSON path, and its id."""
    path = "$" if location.startswith("line") else location
    where = f"{location}, " if location.startswith("line") else ""
    identifier = raw.get("id") if isinstance(raw, dict) else None
    suffix = f" (observation {identifier})" if isinstance(identifier, str) else ""
    return f"{where}{path}.observations[{index}]{suffix}"


def observation_span(raw: Any, trace: dict[str, Any], location: str) -> Span:
    """One Langfuse observation as a :class:`Span`, its payloads under GenAI attribute names."""
    if not isinstance(raw, dict):
        raise RecordError("malformed_observation", "an observation must be an object")
    span_id, trace_id = raw.get("id"), raw.get("traceId") or trace.get("id")
    if not isinstance(span_id, str) or not span_id or not isinstance(trace_id, str):
        raise RecordError("missing_field", "observation without id or traceId")
    metadata = _metadata(raw.get("metadata"))
    attributes = _mapping(metadata.get("attributes"), "metadata.attributes")
    # A plain SPAN says nothing of its kind: its attributes decide (an OpenInference TOOL span).
    kind_hint = TYPE_KINDS.get(str(raw.get("type")))
    level_error = raw.get("level") == "ERROR"
    message = raw.get("statusMessage")
    span = Span(
        trace_id=trace_id,
        span_id=span_id,
        location=location,
        name=raw.get("name") if isinstance(raw.get("name"), str) else "",
        parent_id=_str_or_none(raw.get("parentObservationId"), "parentObservationId"),
        started_at=parse_time(raw.get("startTime"), "startTime"),
        ended_at=parse_time(raw.get("endTime"), "endTime"),
        status="error" if level_error else None,
        status_message=message if level_error and isinstance(message, str) else None,
        attributes=attributes,
        resource_attributes=_mapping(
            metadata.get("resourceAttributes"), "metadata.resourceAttributes"
        ),
        scope=_scope_name(metadata.get("scope")),
        kind_hint=kind_hint,
        version=_version(raw, trace),
    )
    # Langfuse stores payloads as JSON text; text that is not JSON stays text.
    span.input, span.output = json_text_value(raw.get("input")), json_text_value(raw.get("output"))
    kind = step_kind(span)
    if kind == "llm":
        span.consumed = frozenset(_fill_generation(attributes, raw))
    elif kind == "tool":
        span.consumed = frozenset(_fill_tool(attributes, raw))
        span.fallback = lambda: _tool_fallback(raw)
    return span


def _version(raw: dict[str, Any], trace: dict[str, Any]) -> str | None:
    """The version Langfuse records for an observation: its own, else its trace's version or
    release (the deploy that served it)."""
    for value in (raw.get("version"), trace.get("version"), trace.get("release")):
        version = version_text(value)
        if version is not None:
            return version
    return None


def parse_time(value: Any, what: str) -> datetime | None:
    """An ISO 8601 time as UTC (a time without zone is taken as UTC); missing is None."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise RecordError("mistyped_field", f"{what} must be an ISO time string")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise RecordError("mistyped_field", f"{what} {value!r} is not an ISO time") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _fill_generation(attributes: dict[str, Any], raw: dict[str, Any]) -> set[str]:
    """Put Langfuse's copies of the model, usage and parameters back where the dialects read
    them (the messages stay in the observation's input and output)."""
    added: dict[str, Any] = {}
    if isinstance(raw.get("model"), str):
        added["gen_ai.request.model"] = raw["model"]
    usage = raw.get("usageDetails") if isinstance(raw.get("usageDetails"), dict) else {}
    for name, key in USAGE_DETAILS.items():
        if isinstance(usage.get(name), int) and key not in added:
            added[key] = usage[name]
    parameters = raw.get("modelParameters")
    for name, value in parameters.items() if isinstance(parameters, dict) else ():
        # Handlers record settings left unset as "" or -1; those were never sent.
        if name in PARAMETERS and value not in (None, "", -1, "-1"):
            added[PARAMETERS[name]] = value
    added = {key: value for key, value in added.items() if key not in attributes}
    attributes.update(added)
    return set(added)


def _fill_tool(attributes: dict[str, Any], raw: dict[str, Any]) -> set[str]:
    """Put a tool observation's input and output back as GenAI tool attributes."""
    added: dict[str, Any] = {}
    if raw.get("input") is not None:
        added["gen_ai.tool.call.arguments"] = raw["input"]
    if raw.get("output") is not None:
        added["gen_ai.tool.call.result"] = json_text_value(raw["output"])
    added = {key: value for key, value in added.items() if key not in attributes}
    attributes.update(added)
    return set(added)


def _tool_fallback(raw: dict[str, Any]) -> ToolExecution:
    """The execution from a tool observation without GenAI attributes."""
    name = raw.get("name") if isinstance(raw.get("name"), str) else "tool"
    return ToolExecution.from_raw(name, raw.get("input"), result=json_text_value(raw.get("output")))


def _metadata(value: Any) -> dict[str, Any]:
    """The observation metadata as a dict."""
    value = json_text_value(value)
    return value if isinstance(value, dict) else {}


def _str_or_none(value: Any, what: str) -> str | None:
    """A string field that may be missing."""
    if value is None or isinstance(value, str):
        return value or None
    raise RecordError("mistyped_field", f"{what} must be a string")


def _scope_name(scope: Any) -> str | None:
    """The instrumentation scope name in the metadata."""
    name = scope.get("name") if isinstance(scope, dict) else None
    return name if isinstance(name, str) else None


def _mapping(value: Any, what: str) -> dict[str, Any]:
    """A dict field that may be missing."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RecordError("mistyped_field", f"{what} must be an object")
    return dict(value)
