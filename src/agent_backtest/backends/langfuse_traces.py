"""Traces of a Langfuse project, pulled through its public API into the export the Langfuse
reader takes: one ``{"trace": {...}, "observations": [...]}`` per line.

``GET /api/public/traces`` lists traces a page at a time (``page`` from 1, ``meta.totalPages``);
each trace's observations come from ``GET /api/public/observations?traceId=…``, paged the same
way. The window is fixed when the pull starts (``toTimestamp`` is the start time when no end is
given), so traces arriving meanwhile do not shift the pages of a resumed pull.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_backtest.backends import pull_state
from agent_backtest.backends.pull_state import PullState
from agent_backtest.backends.rest_client import RestClient, shown_url
from agent_backtest.backends.trace_file import TraceFile
from agent_backtest.errors import UserError

PUBLIC_KEY_VARIABLE = "LANGFUSE_PUBLIC_KEY"
SECRET_KEY_VARIABLE = "LANGFUSE_SECRET_KEY"
HOST_VARIABLES = ("LANGFUSE_HOST", "LANGFUSE_BASE_URL")
TRACES_PATH = "/api/public/traces"
OBSERVATIONS_PATH = "/api/public/observations"
OBSERVATIONS_PAGE = 100


def pull_traces(
    client: RestClient,
    out: Path,
    state: PullState,
    *,
    since: datetime | None,
    until: datetime,
    page_size: int,
) -> PullState:
    """Append every trace of the window with its observations to ``out``, a page of traces at
    a time from ``state``, saving it after each page; the state at the end (complete)."""
    trace_file = TraceFile(out, "output")
    try:
        while not state.complete:
            number = state.position or 1
            params: dict[str, Any] = {
                "page": number,
                "limit": page_size,
                "toTimestamp": until.isoformat(),
                "orderBy": "timestamp.asc",
            }
            if since is not None:
                params["fromTimestamp"] = since.isoformat()
            page = _page(client, TRACES_PATH, params)
            for trace in page["data"]:
                observations = list(_observations(client, trace["id"]))
                trace = {key: value for key, value in trace.items() if key != "observations"}
                trace_file.append({"trace": trace, "observations": observations})
            state.records += len(page["data"])
            state.written_bytes = out.stat().st_size
            state.position = number + 1
            state.complete = number >= page["meta"].get("totalPages", 0) or not page["data"]
            pull_state.save(out, state)
    finally:
        trace_file.close()
    return state


def _observations(client: RestClient, trace_id: str) -> Iterator[dict[str, Any]]:
    """Every observation of one trace, page by page."""
    number = 1
    while True:
        params = {"traceId": trace_id, "page": number, "limit": OBSERVATIONS_PAGE}
        page = _page(client, OBSERVATIONS_PATH, params)
        yield from page["data"]
        if number >= page["meta"].get("totalPages", 0) or not page["data"]:
            return
        number += 1


def _page(client: RestClient, path: str, params: dict[str, Any]) -> dict[str, Any]:
    """One page of a Langfuse list: ``{"data": [...], "meta": {...}}``."""
    response = client.get(path, params)
    body = response.json() if response.status_code != 404 else None
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("data"), list)
        or not isinstance(body.get("meta"), dict)
    ):
        raise UserError(
            f"{shown_url(client.endpoint)}{path} is not Langfuse's public API (HTTP "
            f"{response.status_code}): give the Langfuse base URL, such as "
            "https://cloud.langfuse.com",
            "endpoint",
        )
    return body
