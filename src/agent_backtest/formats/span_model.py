"""A span in a format-neutral shape: what the OTLP and Langfuse readers decode a file into."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from agent_backtest.trace import LLMCall, ToolExecution
from agent_backtest.trace.models import StepKind

Fallback = Callable[[], LLMCall | ToolExecution | None]


class SpanEvent(NamedTuple):
    """One event recorded inside a span: its name, time and attributes."""

    name: str
    time: datetime | None
    attributes: dict[str, Any]


@dataclass(slots=True)
class Span:
    """One span in a format-neutral shape; ids are lowercase hex, times UTC or None."""

    trace_id: str
    span_id: str
    name: str
    location: str
    """Where the span is in its file (line and span id, or JSON path), for error messages."""
    parent_id: str | None = None
    kind: str | None = None
    """OTel span kind in lowercase (``client``, ``internal``, …) if recorded."""
    started_at: datetime | None = None
    ended_at: datetime | None = None
    status: str | None = None
    """``ok``, ``error`` or None when the status was not set."""
    status_message: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[SpanEvent] = field(default_factory=list)
    resource_attributes: dict[str, Any] = field(default_factory=dict)
    scope: str | None = None
    session_id: str | None = None
    """A session id the source records outside the attributes (Langfuse ``trace.sessionId``)."""
    kind_hint: StepKind | None = None
    """The step kind when the source says it outright (Langfuse observation type)."""
    version: str | None = None
    """A version the source records outside the attributes (Langfuse's observation version,
    else its trace's version, else its release)."""
    fallback: Fallback | None = None
    """Builds the LLM call or tool execution when no attribute dialect recognises the span."""
    consumed: frozenset[str] = frozenset()
    """Attribute keys the source already turned into the fallback's payload."""
    input: Any = None
    """The request payload a source keeps outside the attributes (a Langfuse observation's
    ``input``), decoded; None when the source has none."""
    output: Any = None
    """The answer payload a source keeps outside the attributes (Langfuse ``output``)."""
