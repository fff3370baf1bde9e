"""Streamed bodies: assembling server-sent events, in cassettes and in request/response logs.

The streams come from the real cassettes under ``tests/fixtures/cassette/streams/``; a test that
needs a broken stream cuts or alters a real one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_backtest.errors import RecordError
from agent_backtest.formats import cassette, chat_log, exchanges, streams
from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.trace import Session, ToolCall

STREAMS = Path(__file__).resolve().parent.parent / "fixtures" / "cassette" / "streams"


def interaction(name: str, index: int = 0) -> dict[str, Any]:
    """One interaction of a shipped streamed cassette, as plain data."""
    document = yaml.safe_load((STREAMS / f"{name}.yaml").read_text())
    return document["interactions"][index]


def request_body(recorded: dict[str, Any]) -> Any:
    """The request body of an interaction, parsed."""
    request = recorded["request"]
    return request.get("parsed_body") or json.loads(request["body"])


def stream_text(recorded: dict[str, Any]) -> str:
    """The recorded server-sent events of an interaction."""
    return recorded["response"]["body"]["string"]


def read_cassette(path: Path, interactions: list[Any]) -> tuple[list[Session], SkipLog]:
    """The sessions and skips of a cassette written with these interactions."""
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}))
    skips = SkipLog(str(path))
    return list(cassette.read(path, ReadOptions(), skips)), skips


def read_log(path: Path, lines: list[Any]) -> tuple[list[Session], SkipLog]:
    """The sessions and skips of a request/response log of these lines."""
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    skips = SkipLog(str(path))
    return list(chat_log.read(path, ReadOptions(), skips)), skips


def test_events_are_the_data_lines_without_done() -> None:
    text = stream_text(interaction("openllmetry_chat_tools_streaming"))
    events = streams.parse_events(text)
    assert len(events) == 8  # nine data lines, the last one [DONE]
    assert events[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_an_event_of_several_data_lines_is_joined() -> None:
    text = 'event: message_stop\ndata: {"type":\ndata: "message_stop"}\n\n'
    assert streams.parse_events(text) == [{"type": "message_stop"}]


def test_a_chat_completion_chunk_stream_becomes_a_completion_body() -> None:
    text = stream_text(interaction("otel_chat_multiple_tools_streaming"))
    streamed = streams.assemble(text)
    assert streamed.api == streams.CHAT
    (choice,) = streamed.body["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] is None
    assert [call["function"]["arguments"] for call in choice["message"]["tool_calls"]] == [
        '{"location": "Seattle, WA"}',
        '{"location": "San Francisco, CA"}',
    ]
    assert streamed.body["usage"]["total_tokens"] == 126
    assert streamed.note == "production streamed this answer; it was assembled from 18 events"


def test_a_refusal_is_assembled_from_its_deltas() -> None:
    first = {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": []}
    chunks = [
        {**first, "choices": [{"index": 0, "delta": {"role": "assistant", "refusal": "I can"}}]},
        {**first, "choices": [{"index": 0, "delta": {"refusal": "not help."}}]},
        {**first, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    body = streams.chat_completion(chunks)
    assert body["choices"][0]["message"] == {
        "role": "assistant",
        "content": None,
        "refusal": "I cannot help.",
    }


def test_a_streamed_function_call_of_the_functions_api_is_a_tool_call() -> None:
    text = stream_text(interaction("openllmetry_chat_tools_streaming"))
    chunks = streams.parse_events(text)
    for chunk in chunks:  # the same answer as the functions API (before tools) streamed it
        delta = chunk["choices"][0]["delta"]
        if "tool_calls" in delta:
            delta["function_call"] = delta.pop("tool_calls")[0]["function"]
    (choice,) = streams.chat_completion(chunks)["choices"]
    assert choice["message"]["tool_calls"] == [
        {
            "id": None,
            "type": "function",
            "function": {
                "name": "get_current_weather",
                "arguments": '{"location":"San Francisco"}',
            },
        }
    ]


def test_a_responses_stream_without_its_closing_event_is_rebuilt_from_the_items() -> None:
    text = stream_text(interaction("pydantic_ai_responses_tool_stream"))
    events = [e for e in streams.parse_events(text) if e["type"] != "response.completed"]
    body = streams.responses_body(events)
    assert body["output"] == [
        {
            "type": "function_call",
            "id": "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2",
            "call_id": "call_kL0PCQV7M2WMoVX8V8OtYSAL",
            "name": "get_capital",
            "arguments": '{"country":"France"}',
            "status": "completed",
        }
    ]
    added_only = [e for e in events if e["type"] != "response.output_item.done"]
    rebuilt = streams.responses_body(added_only)["output"][0]
    assert rebuilt["arguments"] == '{"country":"France"}'  # from the argument deltas


def test_an_anthropic_stream_becomes_a_message_body() -> None:
    streamed = streams.assemble(stream_text(interaction("openllmetry_anthropic_tools_streaming")))
    assert streamed.api == streams.ANTHROPIC
    body = streamed.body
    assert [block["type"] for block in body["content"]] == ["text", "tool_use", "tool_use"]
    assert body["content"][2]["input"] == {"timezone": "America/Los_Angeles"}
    assert body["stop_reason"] == "tool_use"
    assert body["usage"]["input_tokens"] == 506 and body["usage"]["output_tokens"] == 153


def test_a_stream_that_ends_in_an_error_is_an_error_response(tmp_path: Path) -> None:
    recorded = interaction("openllmetry_anthropic_tools_streaming")
    cut = stream_text(recorded).split("event: message_delta")[0]
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    recorded["response"]["body"]["string"] = cut + f"event: error\ndata: {json.dumps(error)}\n\n"
    sessions, skips = read_cassette(tmp_path / "error.yaml", [recorded])
    assert sessions == []
    assert dict(skips.counts) == {"error_response": 1}
    assert skips.examples[0].detail == "streamed error: overloaded_error"


def test_an_event_that_is_not_json_is_undecodable(tmp_path: Path) -> None:
    recorded = interaction("openllmetry_chat_tools_streaming")
    text = stream_text(recorded)
    recorded["response"]["body"]["string"] = text.replace('data: {"id"', "data: {id", 1)
    sessions, skips = read_cassette(tmp_path / "broken.yaml", [recorded])
    assert sessions == []
    assert dict(skips.counts) == {"undecodable_body": 1}
    assert "event 0" in skips.examples[0].detail


def test_a_stream_of_another_api_than_the_endpoint_is_undecodable(tmp_path: Path) -> None:
    recorded = interaction("openllmetry_chat_tools_streaming")
    anthropic = interaction("openllmetry_anthropic_tools_streaming")
    recorded["response"]["body"]["string"] = stream_text(anthropic)
    sessions, skips = read_cassette(tmp_path / "mixed.yaml", [recorded])
    assert sessions == []
    assert dict(skips.counts) == {"undecodable_body": 1}
    assert "anthropic_messages stream" in skips.examples[0].detail


def test_a_log_line_may_keep_the_streamed_answer_as_its_events(tmp_path: Path) -> None:
    recorded = interaction("otel_chat_multiple_tools_streaming")
    line = {"request": request_body(recorded), "response": stream_text(recorded)}
    sessions, skips = read_log(tmp_path / "log.jsonl", [line])
    assert sum(skips.counts.values()) == 0
    (step,) = sessions[0].steps()
    assert step.llm is not None and step.llm.response is not None
    assert [call.name for call in step.llm.response.message.tool_calls or []] == [
        "get_current_weather",
        "get_current_weather",
    ]
    assert step.llm.notes == ["production streamed this answer; it was assembled from 18 events"]


def test_a_log_line_may_keep_the_streamed_answer_as_a_list_of_its_events(tmp_path: Path) -> None:
    recorded = interaction("openllmetry_anthropic_tools_streaming")
    events = streams.parse_events(stream_text(recorded))
    line = {"request": request_body(recorded), "response": events}
    sessions, skips = read_log(tmp_path / "log.jsonl", [line])
    assert sum(skips.counts.values()) == 0
    (step,) = sessions[0].steps()
    assert step.llm is not None and step.llm.response is not None
    assert [call.name for call in step.llm.response.message.tool_calls or []] == [
        "get_weather",
        "get_time",
    ]
    assert step.llm.notes == ["production streamed this answer; it was assembled from 35 events"]


def test_a_log_line_of_anthropic_messages_reads_like_its_cassette(tmp_path: Path) -> None:
    recorded = interaction("openllmetry_anthropic_tools_streaming")
    answer = streams.assemble(stream_text(recorded)).body  # the unstreamed form of the answer
    line = {"request": request_body(recorded), "response": answer}
    sessions, skips = read_log(tmp_path / "log.jsonl", [line])
    assert sum(skips.counts.values()) == 0
    (step,) = sessions[0].steps()
    assert step.llm is not None and step.llm.response is not None
    request, response = step.llm.request, step.llm.response
    assert request.model == "claude-3-5-sonnet-20240620"
    assert request.tools is not None and [tool.name for tool in request.tools] == [
        "get_weather",
        "get_time",
    ]
    assert request.tools[1].parameters == {
        "type": "object",
        "properties": {
            "timezone": {
                "type": "string",
                "description": "The IANA time zone name, e.g. America/Los_Angeles",
            }
        },
        "required": ["timezone"],
    }
    assert response.message.tool_calls == [
        ToolCall(
            id="toolu_014x5X91kx3fvdhpLvwXZWE2",
            name="get_weather",
            arguments={"location": "San Francisco, CA", "unit": "celsius"},
        ),
        ToolCall(
            id="toolu_0121kXsENLvoDZ72LCuAnCCz",
            name="get_time",
            arguments={"timezone": "America/Los_Angeles"},
        ),
    ]
    assert response.finish_reason == "tool_calls"
    assert step.llm.notes == []  # this answer was not streamed


def test_only_model_endpoints_are_model_calls() -> None:
    assert exchanges.api_of_path("/v1/chat/completions") == streams.CHAT
    assert exchanges.api_of_path("/openai/deployments/gpt/chat/completions") == streams.CHAT
    assert exchanges.api_of_path("/v1/responses") == streams.RESPONSES
    assert exchanges.api_of_path("/v1/messages") == streams.ANTHROPIC
    assert exchanges.api_of_path("/v1/threads/thread_abc/messages") is None  # Assistants API
    assert exchanges.api_of_path("/v1/embeddings") is None


def test_a_body_that_is_neither_json_nor_a_stream_stays_undecodable() -> None:
    with pytest.raises(RecordError) as caught:
        streams.assemble("data: [DONE]\n\n")
    assert caught.value.reason == "undecodable_body"
