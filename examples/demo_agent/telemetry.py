"""The demo agent's own traces: OpenTelemetry spans written to a file as OTLP/JSON, or sent to
an OTLP/HTTP endpoint (``abt collect``, an OpenTelemetry Collector).

Asked for with ``--otlp-file FILE`` and ``--otlp-endpoint URL``. Each turn is a span
(``invoke_agent``) continuing the trace of the request's W3C ``traceparent`` header, with the
agent's session id as ``session.id``; each model call under it is a ``chat`` span in the
OpenTelemetry GenAI conventions (the messages as sent, the tools offered, the answer, the
tokens), so the traces read as sessions whose model calls can be replayed. The SDK and its OTLP
encoder are imported only here, when the export is asked for (``pip install opentelemetry-sdk
opentelemetry-exporter-otlp-proto-common``, and ``opentelemetry-exporter-otlp-proto-http`` for
an endpoint).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from .agent import SYSTEM, TOOL_DEFINITIONS, Model

AGENT_NAME = "demo-agent"


class OtlpJsonFile(SpanExporter):
    """Appends each batch of finished spans to a file as one OTLP/JSON ``TracesData`` line,
    the shape the OpenTelemetry Collector's file exporter writes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        from google.protobuf.json_format import MessageToDict

        line = json.dumps(MessageToDict(encode_spans(spans)), separators=(",", ":"))
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing held open: each batch is written whole."""


@dataclass
class Telemetry:
    """The app's tracer, exporting every span to the file as it ends."""

    tracer: trace.Tracer
    model_name: str

    @classmethod
    def exporting(
        cls, model_name: str, path: Path | None = None, endpoint: str | None = None
    ) -> Telemetry:
        """Every span written to the file ``path`` as OTLP/JSON, and sent to the OTLP/HTTP
        ``endpoint`` (an OpenTelemetry Collector, ``abt collect``), as it ends."""
        provider = TracerProvider(resource=Resource.create({"service.name": AGENT_NAME}))
        if path is not None:
            provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFile(path)))
        if endpoint is not None:
            # the exporter of the SDK's own OTLP/HTTP package, only when an endpoint is named
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
        return cls(provider.get_tracer("examples.demo_agent"), model_name)

    def turn_span(self, headers: Mapping[str, str], session_id: str) -> trace.Span:
        """The turn's span, in the trace the request's ``traceparent`` names (if any)."""
        parent = TraceContextTextMapPropagator().extract(dict(headers))
        return self.tracer.start_span(
            f"invoke_agent {AGENT_NAME}",
            context=parent,
            kind=trace.SpanKind.SERVER,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": AGENT_NAME,
                "session.id": session_id,
            },
        )

    def traced(self, model: Model, turn: trace.Span) -> Model:
        """``model``, each of its calls a ``chat`` span under the turn's."""
        return _TracedModel(model, self, trace.set_span_in_context(turn))


@dataclass
class _TracedModel:
    """A model whose every call is recorded as a GenAI ``chat`` span."""

    model: Model
    telemetry: Telemetry
    parent: Context

    async def complete(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        name = self.telemetry.model_name
        span = self.telemetry.tracer.start_span(
            f"chat {name}",
            context=self.parent,
            kind=trace.SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": name,
                "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
                "gen_ai.input.messages": json.dumps(
                    [genai_message(m) for m in messages if m["role"] != "system"]
                ),
                "gen_ai.tool.definitions": json.dumps(TOOL_DEFINITIONS),
            },
        )
        try:
            body = await self.model.complete(messages)
        except Exception as exc:
            span.set_status(trace.Status(trace.StatusCode.ERROR, str(exc)))
            span.end()
            raise
        choice = body["choices"][0]
        answer = genai_message(choice["message"])
        answer["finish_reason"] = choice.get("finish_reason") or (
            "tool_call" if choice["message"].get("tool_calls") else "stop"
        )
        span.set_attribute("gen_ai.output.messages", json.dumps([answer]))
        span.set_attribute("gen_ai.response.model", body.get("model") or name)
        usage = body.get("usage") or {}
        for key, attribute in (
            ("prompt_tokens", "gen_ai.usage.input_tokens"),
            ("completion_tokens", "gen_ai.usage.output_tokens"),
        ):
            if usage.get(key) is not None:
                span.set_attribute(attribute, usage[key])
        span.end()
        return body


def genai_message(message: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions message as a GenAI message: its role and typed parts."""
    role = message["role"]
    if role == "tool":
        part = {
            "type": "tool_call_response",
            "id": message.get("tool_call_id"),
            "response": message.get("content"),
        }
        return {"role": "tool", "parts": [part]}
    parts: list[dict[str, Any]] = []
    if message.get("content"):
        parts.append({"type": "text", "content": message["content"]})
    for call in message.get("tool_calls") or []:
        function = call["function"]
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": function["name"],
                "arguments": _arguments(function.get("arguments")),
            }
        )
    return {"role": role, "parts": parts}


def _arguments(raw: str | None) -> Any:
    """A call's arguments as the object they encode; the text when it is not JSON."""
    try:
        return json.loads(raw or "{}")
    except ValueError:
        return raw
