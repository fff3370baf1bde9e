"""A scripted tool-calling exchange, recorded by the real OpenTelemetry SDK with OpenInference
attributes: an agent span per session, the model asking for a tool, the tool, the model's answer.

The same spans are written by the SDK's own OTLP encoder as the collector's file form (protobuf's
JSON mapping, ids in base64), the reference the spans received or pulled by abt are compared to.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_backtest.api import build_units

CITIES = ("Paris", "Tokyo", "Lima")
SYSTEM = "You are a weather assistant. Answer in one sentence."
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def record_exchange(tracer: Any, sessions: int = len(CITIES)) -> None:
    """Record one weather conversation per session through ``tracer``."""
    from opentelemetry import trace

    # whole milliseconds: Phoenix keeps microseconds (rounded), the SDK nanoseconds
    start = time.time_ns() // 1_000_000 * 1_000_000 - 60_000_000_000
    for index, city in enumerate(CITIES[:sessions]):
        session = f"weather-{index}"
        at = start + index * 1_000_000_000
        with tracer.start_as_current_span(
            "weather_agent",
            start_time=at,
            attributes={
                "openinference.span.kind": "AGENT",
                "agent.name": "weather_agent",
                "session.id": session,
            },
            end_on_exit=False,
        ) as agent:
            context = trace.set_span_in_context(agent)
            question = f"What is the weather in {city}?"
            ask = tracer.start_span(
                "ChatCompletion",
                context=context,
                kind=trace.SpanKind.CLIENT,
                start_time=at + 1_000_000,
                attributes=_llm_call(session, [("user", question)], tool_call=city),
            )
            ask.end(end_time=at + 40_000_000)
            tool = tracer.start_span(
                "get_weather",
                context=context,
                start_time=at + 41_000_000,
                attributes={
                    "openinference.span.kind": "TOOL",
                    "session.id": session,
                    "tool.name": "get_weather",
                    "tool.parameters": json.dumps({"city": city}),
                    "input.value": json.dumps({"city": city}),
                    "output.value": f"{city}: 18 °C, light rain",
                },
            )
            tool.end(end_time=at + 45_000_000)
            answer = tracer.start_span(
                "ChatCompletion",
                context=context,
                kind=trace.SpanKind.CLIENT,
                start_time=at + 46_000_000,
                attributes=_llm_call(
                    session,
                    [("user", question), ("tool", f"{city}: 18 °C, light rain")],
                    answer=f"It is 18 °C with light rain in {city}.",
                ),
            )
            answer.end(end_time=at + 90_000_000)
            agent.end(end_time=at + 95_000_000)


def _llm_call(
    session: str,
    history: Sequence[tuple[str, str]],
    tool_call: str | None = None,
    answer: str | None = None,
) -> dict[str, Any]:
    """OpenInference attributes of one chat completion."""
    attributes: dict[str, Any] = {
        "openinference.span.kind": "LLM",
        "session.id": session,
        "llm.provider": "openai",
        "llm.system": "openai",
        "llm.model_name": "gpt-4o-mini-2024-07-18",
        "llm.invocation_parameters": json.dumps({"temperature": 0.2}),
        "llm.tools.0.tool.json_schema": json.dumps(WEATHER_TOOL),
        "llm.token_count.prompt": 40 + 10 * len(history),
        "llm.token_count.completion": 12,
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": SYSTEM,
        "llm.output_messages.0.message.role": "assistant",
    }
    for number, (role, content) in enumerate(history, start=1):
        prefix = f"llm.input_messages.{number}.message"
        attributes[f"{prefix}.role"] = role
        attributes[f"{prefix}.content"] = content
        if role == "tool":
            attributes[f"{prefix}.tool_call_id"] = f"call_{session}"
    if tool_call is not None:
        call = "llm.output_messages.0.message.tool_calls.0.tool_call"
        attributes[f"{call}.id"] = f"call_{session}"
        attributes[f"{call}.function.name"] = "get_weather"
        attributes[f"{call}.function.arguments"] = json.dumps({"city": tool_call})
        attributes["llm.finish_reason"] = "tool_calls"
    if answer is not None:
        attributes["llm.output_messages.0.message.content"] = answer
        attributes["llm.finish_reason"] = "stop"
    return attributes


def write_sdk_file(spans: Sequence[Any], path: Path) -> Path:
    """``spans`` (finished SDK spans) as the SDK's OTLP encoder gives them, one request per
    line in protobuf's JSON mapping."""
    from google.protobuf import json_format
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    message = encode_spans(list(spans))
    path.write_text(json_format.MessageToJson(message, indent=None) + "\n")
    return path


def units_of(path: Path) -> list[dict[str, Any]]:
    """The units abt builds from a trace file, without the file they were read from, by id."""
    units = [unit.model_dump(mode="json", exclude={"source"}) for unit in build_units([path])]
    return sorted(units, key=lambda unit: unit["unit_id"])
