"""The three attribute dialects describing the same exchange must read as the same LLM calls.

The inputs are written by hand from the specifications: the GenAI attribute form (semantic
conventions ≥ 1.37), the older GenAI event form (1.28–1.36) and OpenInference. The exchange:
system + user → the assistant calls get_weather twice in parallel; then, with both tool results,
the assistant answers in text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.formats import otlp
from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.trace import LLMCall, Session
from tests.formats.otlp_json import b64, span, traces_data, write_document, write_lines

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SYSTEM = "You are a weather assistant. Answer briefly."
USER = "What is the weather in Paris and in Tokyo?"
ANSWER = "Paris is rainy at 12°C; Tokyo is sunny at 24°C."
CALLS = [("call_paris", {"city": "Paris"}), ("call_tokyo", {"city": "Tokyo"})]
RESULTS = {"call_paris": "rainy, 12°C", "call_tokyo": "sunny, 24°C"}
TOOL = {
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
USAGE = [(52, 31), (120, 20)]
COMMON = {
    "gen_ai.request.model": "gpt-4o-mini",
    "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
    "gen_ai.request.temperature": 0.2,
    "gen_ai.request.max_tokens": 256,
}


def read_all(path: Path) -> list[Session]:
    """Every session of an OTLP file, failing on any skip."""
    skips = SkipLog(str(path), strict=True)
    return list(otlp.read(path, ReadOptions(), skips))


def llm_calls(path: Path) -> list[LLMCall]:
    """The LLM calls of the file's only session, in order."""
    (session,) = read_all(path)
    return [step.llm for step in session.steps() if step.kind == "llm"]


# --- GenAI attributes (≥ 1.37) -----------------------------------------------------------------


def genai_parts_call(call_id: str, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": "get_weather", "arguments": arguments}


def current_form(tmp_path: Path) -> Path:
    """First span: JSON strings, instructions apart, arguments as JSON text, flat tool form.
    Second span: structured AnyValues, system in the messages, nested tool form.
    Base64 ids, enum names, a pretty-printed document."""
    first = span(
        b64(TRACE),
        b64("00f067aa0ba902b7"),
        "chat gpt-4o-mini",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            **COMMON,
            "gen_ai.response.id": "chatcmpl-1",
            "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": USER}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [
                    {
                        "role": "assistant",
                        "finish_reason": "tool_call",
                        "parts": [genai_parts_call(i, json.dumps(a)) for i, a in CALLS],
                    }
                ]
            ),
            "gen_ai.tool.definitions": json.dumps([{"type": "function", **TOOL["function"]}]),
            "gen_ai.usage.input_tokens": USAGE[0][0],
            "gen_ai.usage.output_tokens": USAGE[0][1],
        },
        start_ms=0,
        status={"code": "STATUS_CODE_OK"},
    )
    second = span(
        b64(TRACE),
        b64("00f067aa0ba902b8"),
        "chat gpt-4o-mini",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            **COMMON,
            "gen_ai.response.id": "chatcmpl-2",
            "gen_ai.input.messages": [
                {"role": "system", "parts": [{"type": "text", "content": SYSTEM}]},
                {"role": "user", "parts": [{"type": "text", "content": USER}]},
                {"role": "assistant", "parts": [genai_parts_call(i, a) for i, a in CALLS]},
                {
                    "role": "tool",
                    "parts": [
                        {"type": "tool_call_response", "id": i, "response": RESULTS[i]}
                        for i, _ in CALLS
                    ],
                },
            ],
            "gen_ai.output.messages": [
                {
                    "role": "assistant",
                    "finish_reason": "stop",
                    "parts": [{"type": "text", "content": ANSWER}],
                }
            ],
            "gen_ai.tool.definitions": [TOOL],
            "gen_ai.usage.input_tokens": USAGE[1][0],
            "gen_ai.usage.output_tokens": USAGE[1][1],
        },
        start_ms=100,
        status={"code": 1},
    )
    return write_document(tmp_path / "current.json", traces_data([first, second]))


# --- GenAI events (1.28–1.36) ------------------------------------------------------------------


def openai_calls() -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps(a)},
        }
        for i, a in CALLS
    ]


def events_form(tmp_path: Path) -> Path:
    """Bodies both as ``gen_ai.event.content`` JSON and spread over event attributes; the older
    ``gen_ai.system`` provider name; JSON Lines with one span per line; integer kinds."""
    tools = json.dumps([TOOL])
    first = span(
        TRACE,
        "00f067aa0ba902b7",
        "chat gpt-4o-mini",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai",
            **COMMON,
            "gen_ai.response.id": "chatcmpl-1",
            "gen_ai.tool.definitions": tools,
            "gen_ai.response.finish_reasons": ["tool_calls"],
            "gen_ai.usage.input_tokens": USAGE[0][0],
            "gen_ai.usage.output_tokens": USAGE[0][1],
        },
        start_ms=0,
        kind=3,
        events=[
            (
                "gen_ai.system.message",
                {
                    "gen_ai.system": "openai",
                    "gen_ai.event.content": json.dumps({"content": SYSTEM}),
                },
            ),
            ("gen_ai.user.message", {"gen_ai.system": "openai", "content": USER}),
            (
                "gen_ai.choice",
                {
                    "gen_ai.event.content": json.dumps(
                        {
                            "index": 0,
                            "finish_reason": "tool_calls",
                            "message": {"role": "assistant", "tool_calls": openai_calls()},
                        }
                    )
                },
            ),
        ],
    )
    second = span(
        TRACE,
        "00f067aa0ba902b8",
        "chat gpt-4o-mini",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai",
            **COMMON,
            "gen_ai.response.id": "chatcmpl-2",
            "gen_ai.tool.definitions": tools,
            "gen_ai.usage.input_tokens": USAGE[1][0],
            "gen_ai.usage.output_tokens": USAGE[1][1],
        },
        start_ms=100,
        kind=3,
        events=[
            ("gen_ai.system.message", {"content": SYSTEM}),
            ("gen_ai.user.message", {"content": USER}),
            ("gen_ai.assistant.message", {"tool_calls": json.dumps(openai_calls())}),
            *[("gen_ai.tool.message", {"content": RESULTS[i], "id": i}) for i, _ in CALLS],
            (
                "gen_ai.choice",
                {"index": 0, "finish_reason": "stop", "message": {"content": ANSWER}},
            ),
        ],
    )
    return write_lines(tmp_path / "events.jsonl", [traces_data([first]), traces_data([second])])


# --- OpenInference -----------------------------------------------------------------------------


def oi_message(
    prefix: str,
    role: str,
    content: str | None = None,
    calls: list[tuple[str, Any]] = (),
    tool_call_id: str | None = None,
) -> dict[str, Any]:
    attrs: dict[str, Any] = {f"{prefix}.message.role": role}
    if content is not None:
        attrs[f"{prefix}.message.content"] = content
    for j, (call_id, arguments) in enumerate(calls):
        call = f"{prefix}.message.tool_calls.{j}.tool_call"
        attrs[f"{call}.id"] = call_id
        attrs[f"{call}.function.name"] = "get_weather"
        attrs[f"{call}.function.arguments"] = json.dumps(arguments)
    if tool_call_id:
        attrs[f"{prefix}.message.tool_call_id"] = tool_call_id
    return attrs


def oi_llm(
    messages: list[dict[str, Any]], output: dict[str, Any], usage: tuple[int, int], finish: str
) -> dict[str, Any]:
    attrs = {
        "openinference.span.kind": "LLM",
        "llm.provider": "openai",
        "llm.system": "openai",
        "llm.model_name": "gpt-4o-mini-2024-07-18",
        "session.id": "sess-42",
        "llm.invocation_parameters": json.dumps(
            {"model": "gpt-4o-mini", "temperature": 0.2, "max_tokens": 256}
        ),
        "llm.tools.0.tool.json_schema": json.dumps(TOOL),
        "llm.token_count.prompt": usage[0],
        "llm.token_count.completion": usage[1],
        "llm.token_count.total": usage[0] + usage[1],
        "llm.finish_reason": finish,
    }
    for message in messages:
        attrs.update(message)
    attrs.update(output)
    return attrs


def openinference_form(tmp_path: Path) -> Path:
    """Flattened OpenInference attributes under an AGENT span, JSON Lines, the older
    ``instrumentationLibrarySpans`` key."""
    history = [
        oi_message("llm.input_messages.0", "system", SYSTEM),
        oi_message("llm.input_messages.1", "user", USER),
    ]
    first = span(
        TRACE,
        "00f067aa0ba902b7",
        "ChatCompletion",
        oi_llm(
            history,
            oi_message("llm.output_messages.0", "assistant", calls=CALLS),
            USAGE[0],
            "tool_calls",
        ),
        start_ms=0,
        parent="00f067aa0ba902b6",
    )
    second = span(
        TRACE,
        "00f067aa0ba902b8",
        "ChatCompletion",
        oi_llm(
            [
                *history,
                oi_message("llm.input_messages.2", "assistant", calls=CALLS),
                *[
                    oi_message(f"llm.input_messages.{3 + k}", "tool", RESULTS[i], tool_call_id=i)
                    for k, (i, _) in enumerate(CALLS)
                ],
            ],
            oi_message("llm.output_messages.0", "assistant", ANSWER),
            USAGE[1],
            "stop",
        ),
        start_ms=100,
        parent="00f067aa0ba902b6",
    )
    agent = span(
        TRACE,
        "00f067aa0ba902b6",
        "weather_agent",
        {
            "openinference.span.kind": "AGENT",
            "agent.name": "weather_agent",
            "session.id": "sess-42",
        },
        start_ms=-1,
        end_ms=200,
        kind="SPAN_KIND_INTERNAL",
    )
    return write_lines(
        tmp_path / "openinference.jsonl",
        [
            traces_data([agent, first], scope_key="instrumentationLibrarySpans"),
            traces_data([second], scope_key="instrumentationLibrarySpans"),
        ],
    )


# --- the checks --------------------------------------------------------------------------------


@pytest.fixture
def forms(tmp_path: Path) -> dict[str, list[LLMCall]]:
    return {
        "current": llm_calls(current_form(tmp_path)),
        "events": llm_calls(events_form(tmp_path)),
        "openinference": llm_calls(openinference_form(tmp_path)),
    }


def test_first_exchange_is_the_parallel_tool_calls(forms: dict[str, list[LLMCall]]) -> None:
    first = forms["current"][0]
    assert [m.role for m in first.request.messages] == ["system", "user"]
    assert first.request.messages[0].content == SYSTEM
    assert first.request.model == "gpt-4o-mini"
    assert first.request.params == {"temperature": 0.2, "max_tokens": 256}
    assert [t.name for t in first.request.tools] == ["get_weather"]
    assert first.request.tools[0].parameters["required"] == ["city"]
    calls = first.response.message.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_paris", "get_weather", {"city": "Paris"}),
        ("call_tokyo", "get_weather", {"city": "Tokyo"}),
    ]
    assert first.response.finish_reason == "tool_calls"  # GenAI "tool_call", OpenAI name
    assert (first.response.usage.input_tokens, first.response.usage.output_tokens) == (52, 31)
    assert first.response.model == "gpt-4o-mini-2024-07-18"
    assert first.provider == "openai"


def test_second_exchange_carries_both_tool_results(forms: dict[str, list[LLMCall]]) -> None:
    second = forms["current"][1]
    roles = [(m.role, m.tool_call_id) for m in second.request.messages]
    assert roles == [
        ("system", None),
        ("user", None),
        ("assistant", None),
        ("tool", "call_paris"),
        ("tool", "call_tokyo"),
    ]
    assert [m.content for m in second.request.messages[3:]] == ["rainy, 12°C", "sunny, 24°C"]
    assert second.response.message.content == ANSWER
    assert second.response.finish_reason == "stop"
    assert not second.reconstructed


@pytest.mark.parametrize("form", ["events", "openinference"])
def test_every_dialect_reads_the_same_requests(forms: dict[str, list[LLMCall]], form: str) -> None:
    expected = [call.request.model_dump() for call in forms["current"]]
    assert [call.request.model_dump() for call in forms[form]] == expected
    assert [call.provider for call in forms[form]] == ["openai", "openai"]


def test_events_read_the_same_responses(forms: dict[str, list[LLMCall]]) -> None:
    expected = [call.response.model_dump() for call in forms["current"]]
    assert [call.response.model_dump() for call in forms["events"]] == expected


def test_openinference_reads_the_same_responses(forms: dict[str, list[LLMCall]]) -> None:
    # OpenInference records no response id, and does record the total token count.
    left_out = {"id": True, "usage": {"total_tokens"}}
    expected = [call.response.model_dump(exclude=left_out) for call in forms["current"]]
    found = forms["openinference"]
    assert [call.response.model_dump(exclude=left_out) for call in found] == expected
    assert [call.response.usage.total_tokens for call in found] == [83, 140]
    assert [call.response.id for call in found] == [None, None]


def test_openinference_session_and_agent(tmp_path: Path) -> None:
    (session,) = read_all(openinference_form(tmp_path))
    assert session.id == "sess-42"
    assert [step.kind for step in session.steps()] == ["agent", "llm", "llm"]
    assert [step.name for step in session.steps()] == ["weather_agent"] * 3
    assert session.turns[0].user_input == USER
    assert session.turns[0].agent_output == ANSWER
    assert session.agent.name == "weather_agent"
    # message attributes became the call; what is left is kept for reference
    llm_attributes = session.steps()[1].attributes
    assert "llm.input_messages.0.message.content" not in llm_attributes
    assert llm_attributes["llm.model_name"] == "gpt-4o-mini-2024-07-18"


def test_base64_ids_and_enum_names(tmp_path: Path) -> None:
    (session,) = read_all(current_form(tmp_path))
    assert session.id == TRACE
    steps = session.steps()
    assert [step.id for step in steps] == ["00f067aa0ba902b7", "00f067aa0ba902b8"]
    assert [step.status for step in steps] == ["ok", "ok"]
    assert steps[0].started_at.isoformat() == "2023-11-14T22:13:20+00:00"
    assert session.agent.name == "weather-agent" and session.agent.version == "1.2.0"


def test_missing_tool_definitions_stay_unrecorded(tmp_path: Path) -> None:
    raw = span(
        TRACE,
        "00f067aa0ba902b7",
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": USER}]}]
            ),
        },
    )
    (call,) = llm_calls(write_document(tmp_path / "t.json", traces_data([raw])))
    assert call.request.tools is None
    assert call.response is None  # no output recorded: the step is kept, without an answer
