"""Spans of a Phoenix project, pulled through its REST API into an OTLP/JSON trace file.

``GET /v1/projects/{project}/spans`` answers a page of spans (newest first) and the cursor of
the next page. Each page becomes one ``TracesData`` line: Phoenix keeps a span's attributes
(the OpenInference ones flattened, as instrumentations send them) and gives its OpenInference
kind apart, which is put back as ``openinference.span.kind``, so abt's OTLP reader reads the
file as it would the exporter's own output. What Phoenix does not keep (the OTel span kind, the
resource) is not invented.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

from agent_backtest.backends import pull_state
from agent_backtest.backends.otlp_json import otlp_attributes
from agent_backtest.backends.pull_state import PullState
from agent_backtest.backends.rest_client import RestClient, shown_url
from agent_backtest.backends.trace_file import TraceFile
from agent_backtest.errors import UserError

KEY_VARIABLE = "PHOENIX_API_KEY"
KIND_ATTRIBUTE = "openinference.span.kind"
STATUS_CODES = {"UNSET": 0, "OK": 1, "ERROR": 2}
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SCOPE = {"name": "phoenix-rest-api"}


def pull_spans(
    client: RestClient,
    project: str,
    out: Path,
    state: PullState,
    *,
    since: datetime | None,
    until: datetime | None,
    page_size: int,
) -> PullState:
    """Append the project's spans to ``out`` page by page from ``state``, saving it after
    each page; the state at the end (complete)."""
    trace_file = TraceFile(out, "output")
    try:
        while not state.complete:
            page = _page(client, project, state.position, since, until, page_size)
            spans = page.get("data") or []
            if spans:
                trace_file.append(traces_data(spans))
            state.records += len(spans)
            state.written_bytes = out.stat().st_size
            state.position = page.get("next_cursor")
            state.complete = not state.position
            pull_state.save(out, state)
    finally:
        trace_file.close()
    return state


def _page(
    client: RestClient,
    project: str,
    cursor: str | None,
    since: datetime | None,
    until: datetime | None,
    page_size: int,
) -> dict[str, Any]:
    params: dict[str, Any] = {"limit": page_size}
    if cursor:
        params["cursor"] = cursor
    if since is not None:
        params["start_time"] = since.isoformat()
    if until is not None:
        params["end_time"] = until.isoformat()
    response = client.get(f"/v1/projects/{quote(project, safe='')}/spans", params)
    if response.status_code == 404:
        raise UserError(
            f"Phoenix at {shown_url(client.endpoint)} has no project {project!r} "
            f"({client.detail(response)}): name one its UI lists",
            "project",
        )
    body = response.json()
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise UserError(
            f"{shown_url(client.endpoint)} answered something other than a page of spans: "
            "is it a Phoenix server?",
            "endpoint",
        )
    return body


def traces_data(spans: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Phoenix REST spans as one OTLP/JSON ``TracesData``."""
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": []},
                "scopeSpans": [{"scope": SCOPE, "spans": [otlp_span(span) for span in spans]}],
            }
        ]
    }


def otlp_span(span: dict[str, Any]) -> dict[str, Any]:
    """One Phoenix REST span as an OTLP/JSON span."""
    context = span.get("context") or {}
    attributes = dict(span.get("attributes") or {})
    if span.get("span_kind"):
        attributes[KIND_ATTRIBUTE] = span["span_kind"]
    otlp: dict[str, Any] = {
        "traceId": context.get("trace_id"),
        "spanId": context.get("span_id"),
        "name": span.get("name", ""),
        "attributes": otlp_attributes(attributes),
        "status": {"code": STATUS_CODES.get(span.get("status_code") or "UNSET", 0)},
    }
    if span.get("parent_id"):
        otlp["parentSpanId"] = span["parent_id"]
    if span.get("status_message"):
        otlp["status"]["message"] = span["status_message"]
    for field, key in (("start_time", "startTimeUnixNano"), ("end_time", "endTimeUnixNano")):
        if span.get(field):
            otlp[key] = str(unix_nanos(span[field]))
    events = [_event(event) for event in span.get("events") or []]
    if events:
        otlp["events"] = events
    return otlp


def _event(event: dict[str, Any]) -> dict[str, Any]:
    otlp = {
        "name": event.get("name", ""),
        "attributes": otlp_attributes(event.get("attributes") or {}),
    }
    if event.get("timestamp"):
        otlp["timeUnixNano"] = str(unix_nanos(event["timestamp"]))
    return otlp


def unix_nanos(iso: str) -> int:
    """An ISO 8601 time (UTC when it names no zone) in nanoseconds since the epoch."""
    moment = datetime.fromisoformat(iso)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - EPOCH) // timedelta(microseconds=1) * 1000
