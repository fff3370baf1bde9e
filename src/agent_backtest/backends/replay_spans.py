"""A replay as OpenTelemetry GenAI spans: one ``chat`` span per replayed call, in OTLP/JSON.

Each span records the candidate's call in the GenAI semantic conventions as they stand since
1.37: the request (``gen_ai.request.*``, ``gen_ai.system_instructions``,
``gen_ai.input.messages``, ``gen_ai.tool.definitions``) and the answer
(``gen_ai.output.messages``, ``gen_ai.response.*``, ``gen_ai.usage.*``), or ``error.type``
and an error status when the call failed. ``abt.*`` attributes say which run, unit and repeat
it is, and its score when the run is scored.

When the unit was read from spans (it knows production's trace and span id), the candidate's
span is a child of production's, in production's trace and linked to it, so a trace viewer
shows the two calls side by side; it starts when production's call started (results.jsonl keeps
no clock time of a call) and lasts the candidate's measured latency. Other units get a trace of
their own. Span ids are derived from the run, unit and repeat, so a second push of the same run
sends the same spans (a backend that keys spans by id keeps one of each).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from agent_backtest.backends.otlp_json import otlp_attributes
from agent_backtest.runs import ResultRecord, ScoreRecord
from agent_backtest.trace import LLMRequest, LLMResponse, Message, ToolCall, ToolDef

SERVICE = "abt"  # the service the spans say sent them
SCOPE = {"name": "agent_backtest.replay"}
TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
SPAN_ID = re.compile(r"^[0-9a-f]{16}$")
SPAN_KIND_CLIENT = 3
STATUS_ERROR = 2
# The sampling parameters a request records, by their GenAI attribute names.
REQUEST_PARAMS = {
    "temperature": "gen_ai.request.temperature",
    "max_tokens": "gen_ai.request.max_tokens",
    "max_completion_tokens": "gen_ai.request.max_tokens",
    "top_p": "gen_ai.request.top_p",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "stop": "gen_ai.request.stop_sequences",
}


@dataclass(frozen=True)
class ReplayedCall:
    """One replayed call: the request as it was sent, what came back, and where it came from."""

    request: LLMRequest
    result: ResultRecord
    production_trace_id: str | None
    production_span_id: str | None
    started_at: datetime
    """When production's call started, else when the run was made."""
    score: ScoreRecord | None = None


def spans_request(calls: Iterable[ReplayedCall], run_id: str) -> dict[str, Any]:
    """An OTLP/JSON ``ExportTraceServiceRequest`` holding one span per call."""
    spans = [call_span(call, run_id) for call in calls]
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": otlp_attributes({"service.name": SERVICE})},
                "scopeSpans": [{"scope": SCOPE, "spans": spans}],
            }
        ]
    }


def call_span(call: ReplayedCall, run_id: str) -> dict[str, Any]:
    """The OTLP/JSON span of one replayed call."""
    result = call.result
    provider, _, model = result.model.partition("/")
    ids = f"{run_id}\0{result.unit_id}\0{result.repeat}"
    linked = production_ids(call)
    trace_id = linked[0] if linked else _hex(f"trace\0{ids}", 32)
    start_ns = int(call.started_at.timestamp() * 1e9)
    span: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": _hex(f"span\0{ids}", 16),
        "name": f"chat {model}",
        "kind": SPAN_KIND_CLIENT,
        "startTimeUnixNano": str(start_ns),
        "endTimeUnixNano": str(start_ns + int((result.latency_ms or 0.0) * 1e6)),
        "attributes": otlp_attributes(_call_attributes(call, provider, model, run_id)),
        "status": {},
    }
    if linked:
        span["parentSpanId"] = linked[1]
        span["links"] = [{"traceId": linked[0], "spanId": linked[1]}]
    if result.error is not None:
        span["status"] = {"code": STATUS_ERROR, "message": result.error.detail[:300]}
    return span


def production_ids(call: ReplayedCall) -> tuple[str, str] | None:
    """Production's (trace id, span id), when the unit knows both."""
    trace_id, span_id = call.production_trace_id, call.production_span_id
    if trace_id and span_id and TRACE_ID.match(trace_id) and SPAN_ID.match(span_id):
        return trace_id, span_id
    return None


def _call_attributes(call: ReplayedCall, provider: str, model: str, run_id: str) -> dict:
    """The span's attributes: the GenAI request and answer, and where the call belongs."""
    request, result = call.request, call.result
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
        "abt.run.id": run_id,
        "abt.unit.id": result.unit_id,
        "abt.repeat": result.repeat,
        "abt.cache_hit": result.cache_hit,
        "session.id": result.session_id,
    }
    if result.seed is not None:
        attributes["gen_ai.request.seed"] = result.seed
    for name, key in REQUEST_PARAMS.items():
        if request.params.get(name) is not None:
            attributes[key] = request.params[name]
    instructions = [m for m in request.messages if m.role in ("system", "developer")]
    if instructions:
        parts = [part for message in instructions for part in _parts(message)]
        attributes["gen_ai.system_instructions"] = _json(parts)
    others = [m for m in request.messages if m.role not in ("system", "developer")]
    attributes["gen_ai.input.messages"] = _json([genai_message(m) for m in others])
    if request.tools:
        attributes["gen_ai.tool.definitions"] = _json([_tool(tool) for tool in request.tools])
    if result.response is not None:
        attributes |= _answer_attributes(result.response)
    if result.error is not None:
        attributes["error.type"] = result.error.kind
    if call.score is not None:
        attributes |= _score_attributes(call.score)
    return attributes


def _answer_attributes(response: LLMResponse) -> dict[str, Any]:
    """``gen_ai.output.messages`` and the response's model, id, finish reason and usage."""
    answer = genai_message(response.message)
    answer["finish_reason"] = response.finish_reason or (
        "tool_call" if response.message.tool_calls else "stop"
    )
    attributes: dict[str, Any] = {
        "gen_ai.output.messages": _json([answer]),
        "gen_ai.response.finish_reasons": [answer["finish_reason"]],
    }
    if response.model:
        attributes["gen_ai.response.model"] = response.model
    if response.id:
        attributes["gen_ai.response.id"] = response.id
    usage = response.usage
    if usage is not None:
        for key, value in (
            ("gen_ai.usage.input_tokens", usage.input_tokens),
            ("gen_ai.usage.output_tokens", usage.output_tokens),
            ("gen_ai.usage.cache_read.input_tokens", usage.cached_input_tokens),
        ):
            if value is not None:
                attributes[key] = value
    return attributes


def _score_attributes(score: ScoreRecord) -> dict[str, Any]:
    attributes: dict[str, Any] = {"abt.score.status": score.status}
    if score.bucket is not None:
        attributes["abt.score.bucket"] = str(score.bucket)
    if score.score is not None:
        attributes["abt.score.value"] = score.score
    return attributes


def genai_message(message: Message) -> dict[str, Any]:
    """A canonical message as a GenAI message: its role and typed parts."""
    if message.role == "tool":
        part = {"type": "tool_call_response", "id": message.tool_call_id}
        part["response"] = message.text()
        return {"role": "tool", "parts": [part]}
    parts = _parts(message)
    parts += [_tool_call(call) for call in message.tool_calls or []]
    return {"role": message.role, "parts": parts}


def _parts(message: Message) -> list[dict[str, Any]]:
    """A message's content as GenAI parts: text as text, other parts as the source typed them."""
    content = message.content
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    parts = []
    for part in content:
        if part.text is not None:
            parts.append({"type": "text", "content": part.text})
        else:
            parts.append(part.model_dump(exclude_none=True))
    return parts


def _tool_call(call: ToolCall) -> dict[str, Any]:
    arguments = call.arguments if call.arguments_raw is None else call.arguments_raw
    return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": arguments}


def _tool(tool: ToolDef) -> dict[str, Any]:
    """A tool definition in the chat-completions form the conventions' example uses."""
    function: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        function["description"] = tool.description
    if tool.parameters is not None:
        function["parameters"] = tool.parameters
    return {"type": "function", "function": function}


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def _hex(text: str, digits: int) -> str:
    """A stable id of ``digits`` hex digits from ``text`` (never all zeros, which OTLP refuses)."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:digits]
    return digest if digest.strip("0") else "1".rjust(digits, "0")


def chunks(calls: Iterable[ReplayedCall], size: int) -> Iterator[list[ReplayedCall]]:
    """``calls`` in lists of at most ``size`` (one OTLP request each)."""
    batch: list[ReplayedCall] = []
    for call in calls:
        batch.append(call)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
