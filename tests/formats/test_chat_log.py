"""OpenAI request/response logs: conversations, Responses chaining, skips, streaming."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.errors import InputError
from agent_backtest.formats import cassette, chat_log, session_steps
from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.trace import Message, Session, ToolCall, ToolDef

SYSTEM = {"role": "system", "content": "You are a travel assistant. Use tools for live data."}
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
INSTRUCTIONS = "You are a travel assistant. Use tools for live data."
FLAT_WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather in a city.",
    "parameters": WEATHER_TOOL["function"]["parameters"],
}


def chat_line(messages: list[dict[str, Any]], answer: dict[str, Any], **extra: Any) -> dict:
    """A chat-completions log line with this request history and answer message."""
    finish = "tool_calls" if answer.get("tool_calls") else "stop"
    return {
        "request": {
            "model": "gpt-4o-mini",
            "messages": messages,
            "tools": [WEATHER_TOOL],
            "temperature": 0.2,
        },
        "response": {
            "id": f"chatcmpl-{len(messages)}",
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "message": answer, "finish_reason": finish}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49},
        },
        **extra,
    }


def tool_call(call_id: str, city: str, arguments: str | None = None) -> dict[str, Any]:
    """An OpenAI tool call of get_weather."""
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments or json.dumps({"city": city})},
    }


def write_lines(path: Path, lines: list[Any]) -> Path:
    """A JSON Lines file with one value (or raw text, for a str) per line."""
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


def read(path: Path, strict: bool = False) -> tuple[list[Session], SkipLog]:
    """All sessions of a log and the skip log."""
    skips = SkipLog(str(path), strict=strict)
    return list(chat_log.read(path, ReadOptions(strict=strict), skips)), skips


def two_interleaved_conversations() -> list[dict[str, Any]]:
    """Conversation A (a tool loop) and B (two user turns), their lines interleaved."""
    user_a = {"role": "user", "content": "Weather in Lisbon?"}
    user_b = {"role": "user", "content": "Suggest a weekend trip from Berlin."}
    call_a = tool_call("call_a1", "Lisbon")
    answer_b = {"role": "assistant", "content": "Try Dresden: two hours by train."}
    # The client echoes the answer back re-serialised: "" for null content, re-spaced JSON.
    echoed_a = {
        "role": "assistant",
        "content": "",
        "tool_calls": [tool_call("call_a1", "", '{"city":"Lisbon"}')],
    }
    return [
        chat_line([SYSTEM, user_a], {"role": "assistant", "content": None, "tool_calls": [call_a]}),
        chat_line([SYSTEM, user_b], answer_b),
        chat_line(
            [
                SYSTEM,
                user_a,
                echoed_a,
                {"role": "tool", "tool_call_id": "call_a1", "content": "21°C, sunny"},
            ],
            {"role": "assistant", "content": "It is 21°C and sunny in Lisbon."},
        ),
        chat_line(
            [SYSTEM, user_b, answer_b, {"role": "user", "content": "And by car?"}],
            {"role": "assistant", "content": "By car, Leipzig is closer."},
        ),
    ]


def test_interleaved_conversations_are_grouped_by_request_prefix(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "log.jsonl", two_interleaved_conversations())
    sessions, skips = read(path)
    assert sum(skips.counts.values()) == 0
    # Each session is emitted right after its last line: A ends at line 3, B at line 4.
    assert [session.id for session in sessions] == ["log.jsonl#line-1", "log.jsonl#line-2"]
    loop, chat = sessions
    assert [step.id for step in loop.steps()] == ["line-1", "line-3"]
    assert [step.id for step in chat.steps()] == ["line-2", "line-4"]
    assert len(loop.turns) == 1
    assert loop.turns[0].user_input == "Weather in Lisbon?"
    assert loop.turns[0].agent_output == "It is 21°C and sunny in Lisbon."
    assert [(turn.user_input, turn.agent_output) for turn in chat.turns] == [
        ("Suggest a weekend trip from Berlin.", "Try Dresden: two hours by train."),
        ("And by car?", "By car, Leipzig is closer."),
    ]
    assert loop.source is not None and loop.source.location == "line 1"


def test_chat_completion_step_keeps_request_and_answer(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "log.jsonl", two_interleaved_conversations())
    first = read(path)[0][0].steps()[0]
    assert first.kind == "llm" and first.status == "ok"
    assert first.llm is not None and first.llm.response is not None
    assert first.llm.request.tools == [
        ToolDef(
            name="get_weather",
            description="Current weather in a city.",
            parameters=WEATHER_TOOL["function"]["parameters"],
        )
    ]
    assert first.llm.request.params == {"temperature": 0.2}
    assert first.llm.response.message.tool_calls == [
        ToolCall(id="call_a1", name="get_weather", arguments={"city": "Lisbon"})
    ]
    assert first.llm.response.usage is not None
    assert first.llm.response.usage.total_tokens == 49
    assert first.llm.reconstructed is False


def test_explicit_session_id_wins(tmp_path: Path) -> None:
    lines = two_interleaved_conversations()
    lines[2]["session_id"] = "support-42"  # would continue line 1 by its prefix
    lines[3]["session_id"] = "support-42"  # would continue line 2
    sessions, _ = read(write_lines(tmp_path / "log.jsonl", lines))
    by_id = {session.id: [step.id for step in session.steps()] for session in sessions}
    assert by_id == {
        "log.jsonl#line-1": ["line-1"],
        "log.jsonl#line-2": ["line-2"],
        "support-42": ["line-3", "line-4"],
    }


def test_identical_openings_of_two_conversations_stay_apart(tmp_path: Path) -> None:
    hello = [SYSTEM, {"role": "user", "content": "hi"}]
    answer = {"role": "assistant", "content": "Hello! Where would you like to go?"}
    lines = [
        chat_line(hello, answer, id="a1"),
        chat_line(hello, answer, id="b1"),
        chat_line(
            [*hello, answer, {"role": "user", "content": "Rome"}],
            {"role": "assistant", "content": "Rome it is."},
            id="a2",
        ),
        chat_line(
            [*hello, answer, {"role": "user", "content": "Oslo"}],
            {"role": "assistant", "content": "Oslo it is."},
            id="b2",
        ),
    ]
    sessions, _ = read(write_lines(tmp_path / "log.jsonl", lines))
    assert {session.id: [step.id for step in session.steps()] for session in sessions} == {
        "a1": ["a1", "a2"],
        "b1": ["b1", "b2"],
    }


def responses_lines() -> list[dict[str, Any]]:
    """A Responses API agent loop: a function call, its output, then a follow-up question."""
    return [
        {
            "id": "r1",
            "started_at": "2025-04-02T10:00:00Z",
            "latency_ms": 850,
            "metadata": {"user_tier": "pro"},
            "request": {
                "model": "gpt-4.1",
                "instructions": INSTRUCTIONS,
                "input": "What's the weather in Paris?",
                "tools": [FLAT_WEATHER_TOOL],
                "store": True,
            },
            "response": {
                "id": "resp_1",
                "object": "response",
                "status": "completed",
                "error": None,
                "model": "gpt-4.1-2025-04-14",
                "output": [
                    {
                        "type": "function_call",
                        "id": "fc_1",
                        "call_id": "call_p1",
                        "name": "get_weather",
                        "arguments": '{"city":"Paris"}',
                        "status": "completed",
                    }
                ],
                "usage": {"input_tokens": 61, "output_tokens": 16, "total_tokens": 77},
            },
        },
        {
            "id": "r2",
            "request": {
                "model": "gpt-4.1",
                "instructions": INSTRUCTIONS,
                "previous_response_id": "resp_1",
                "tools": [FLAT_WEATHER_TOOL],
                "input": [
                    {"type": "function_call_output", "call_id": "call_p1", "output": "18°C, clear"}
                ],
            },
            "response": {
                "id": "resp_2",
                "object": "response",
                "status": "completed",
                "model": "gpt-4.1-2025-04-14",
                "output": [
                    {
                        "type": "message",
                        "id": "msg_2",
                        "role": "assistant",
                        "content": [
                            {
                                "type": "output_text",
                                "annotations": [],
                                "text": "It's 18°C and clear in Paris.",
                            }
                        ],
                    }
                ],
                "usage": {"input_tokens": 90, "output_tokens": 12},
            },
        },
        {
            "id": "r3",
            "request": {
                "model": "gpt-4.1",
                "instructions": INSTRUCTIONS,
                "previous_response_id": "resp_2",
                "tools": [FLAT_WEATHER_TOOL],
                "input": [
                    {"role": "user", "content": [{"type": "input_text", "text": "And in Rome?"}]}
                ],
            },
            "response": {
                "id": "resp_3",
                "object": "response",
                "status": "completed",
                "model": "gpt-4.1-2025-04-14",
                "output": [
                    {"type": "reasoning", "id": "rs_3", "summary": []},
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "Checking Rome."}],
                    },
                    {
                        "type": "function_call",
                        "call_id": "call_r1",
                        "name": "get_weather",
                        "arguments": '{"city":"Rome"}',
                    },
                ],
            },
        },
    ]


PARIS_CALL = ToolCall(id="call_p1", name="get_weather", arguments={"city": "Paris"})


def test_responses_chain_rebuilds_the_full_request(tmp_path: Path) -> None:
    sessions, skips = read(write_lines(tmp_path / "responses.jsonl", responses_lines()))
    assert sum(skips.counts.values()) == 0
    assert len(sessions) == 1 and sessions[0].id == "r1"
    first, second, third = sessions[0].steps()
    assert first.llm is not None and second.llm is not None and third.llm is not None
    assert first.llm.reconstructed is False
    assert first.llm.request.messages == [
        Message(role="system", content=INSTRUCTIONS),
        Message(role="user", content="What's the weather in Paris?"),
    ]
    assert second.llm.reconstructed is True
    assert second.llm.notes and "resp_1" in second.llm.notes[0]
    assert second.llm.request.messages == [
        Message(role="system", content=INSTRUCTIONS),
        Message(role="user", content="What's the weather in Paris?"),
        Message(role="assistant", tool_calls=[PARIS_CALL]),
        Message(role="tool", content="18°C, clear", tool_call_id="call_p1"),
    ]
    assert "previous_response_id" not in second.llm.request.params
    assert second.attributes["previous_response_id"] == "resp_1"
    assert third.llm.request.messages == [
        *second.llm.request.messages,
        Message(role="assistant", content="It's 18°C and clear in Paris."),
        Message(role="user", content="And in Rome?"),
    ]


def test_responses_answers_tools_usage_and_turns(tmp_path: Path) -> None:
    session = read(write_lines(tmp_path / "responses.jsonl", responses_lines()))[0][0]
    first, _, third = session.steps()
    assert first.llm is not None and first.llm.response is not None
    assert first.llm.request.tools == [
        ToolDef(
            name="get_weather",
            description="Current weather in a city.",
            parameters=FLAT_WEATHER_TOOL["parameters"],
        )
    ]
    assert first.llm.request.params == {}  # store is transport, not part of the question
    assert first.llm.response.message == Message(role="assistant", tool_calls=[PARIS_CALL])
    assert first.llm.response.id == "resp_1"
    assert first.llm.response.model == "gpt-4.1-2025-04-14"
    assert first.llm.response.usage is not None
    assert (first.llm.response.usage.input_tokens, first.llm.response.usage.output_tokens) == (
        61,
        16,
    )
    assert third.llm is not None and third.llm.response is not None
    assert third.llm.response.message == Message(
        role="assistant",
        content="Checking Rome.",
        tool_calls=[ToolCall(id="call_r1", name="get_weather", arguments={"city": "Rome"})],
    )
    assert [(turn.user_input, [step.id for step in turn.steps]) for turn in session.turns] == [
        ("What's the weather in Paris?", ["r1", "r2"]),
        ("And in Rome?", ["r3"]),
    ]
    assert first.started_at == datetime(2025, 4, 2, 10, 0, tzinfo=UTC)
    assert first.ended_at == datetime(2025, 4, 2, 10, 0, 0, 850000, tzinfo=UTC)
    assert first.attributes == {"metadata": {"user_tier": "pro"}, "latency_ms": 850}


def test_previous_response_id_without_earlier_line_is_history_not_recorded(tmp_path: Path) -> None:
    first, second, third = responses_lines()
    second["request"]["previous_response_id"] = "resp_from_another_day"
    # third continues resp_2, which is only recorded on a later line.
    path = write_lines(tmp_path / "responses.jsonl", [first, third, second])
    sessions, skips = read(path)
    assert dict(skips.counts) == {"history_not_recorded": 2}
    assert [skip.location for skip in skips.examples] == ["line 2", "line 3"]
    assert [[step.id for step in session.steps()] for session in sessions] == [["r1"]]


def test_unusable_lines_are_skipped_with_reasons(tmp_path: Path) -> None:
    good = two_interleaved_conversations()[1]
    failed = {
        "request": good["request"],
        "response": {"id": "resp_x", "status": "failed", "output": []},
    }
    lines = [
        [1, 2, 3],
        {"response": good["response"]},
        {"request": good["request"]},
        {
            "request": good["request"],
            "response": {
                "error": {
                    "message": "Incorrect API key provided: sk-abc",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
        },
        {**good, "status": 500},
        {"request": {"model": "gpt-4o-mini", "messages": "hello"}, "response": good["response"]},
        failed,
        good,
    ]
    sessions, skips = read(write_lines(tmp_path / "log.jsonl", lines))
    assert dict(skips.counts) == {
        "malformed_record": 1,
        "malformed_request": 2,
        "no_response": 1,
        "error_response": 3,
    }
    assert [(skip.reason, skip.location) for skip in skips.examples] == [
        ("malformed_record", "line 1"),
        ("malformed_request", "line 2"),
        ("no_response", "line 3"),
        ("error_response", "line 4"),
        ("error_response", "line 5"),
        ("malformed_request", "line 6"),
        ("error_response", "line 7"),
    ]
    assert "sk-abc" not in skips.examples[3].detail
    assert [[step.id for step in session.steps()] for session in sessions] == [["line-8"]]


def test_strict_turns_a_skip_into_an_input_error(tmp_path: Path) -> None:
    lines = two_interleaved_conversations()
    lines[2] = {"request": lines[2]["request"]}
    with pytest.raises(InputError) as caught:
        read(write_lines(tmp_path / "log.jsonl", lines), strict=True)
    assert caught.value.location == "line 3"
    assert "no_response" in str(caught.value)


def test_invalid_json_line_is_an_input_error_before_any_session(tmp_path: Path) -> None:
    lines: list[Any] = [*two_interleaved_conversations()[:2], '{"request": {"model": ']
    path = write_lines(tmp_path / "log.jsonl", lines)
    iterator = chat_log.read(path, ReadOptions(), SkipLog(str(path)))
    with pytest.raises(InputError) as caught:
        next(iterator)
    assert caught.value.location == "line 3"
    assert str(path) in str(caught.value)


def test_sessions_are_yielded_before_the_file_is_read_to_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversation = two_interleaved_conversations()
    # Two conversations one after the other: the first ends at line 2.
    lines = [conversation[1], conversation[3], conversation[0], conversation[2]]
    path = write_lines(tmp_path / "log.jsonl", lines)
    passes: list[list[int]] = []
    original = chat_log.iter_json_lines

    def counting(file: Path) -> Iterator[tuple[int, Any]]:
        """The lines of one pass, each line number noted as it is read."""
        seen: list[int] = []
        passes.append(seen)
        for number, value in original(file):
            seen.append(number)
            yield number, value

    monkeypatch.setattr(chat_log, "iter_json_lines", counting)
    iterator = chat_log.read(path, ReadOptions(), SkipLog(str(path)))
    first = next(iterator)
    assert [step.id for step in first.steps()] == ["line-1", "line-2"]
    assert passes == [[1, 2, 3, 4], [1, 2]]  # pass 2 has not read line 3 yet
    second = next(iterator)
    assert [step.id for step in second.steps()] == ["line-3", "line-4"]
    assert passes[1] == [1, 2, 3, 4]


def test_grouping_memory_holds_hashes_not_messages(tmp_path: Path) -> None:
    from agent_backtest.formats.conversations import ConversationPlan

    plan = ConversationPlan()
    lines = two_interleaved_conversations()
    for number, line in enumerate(lines, start=1):
        plan.place(number, chat_log.parse_line(line).exchange, f"s{number}")
    assert all(isinstance(key, bytes) and len(key) == 32 for key in plan._answers)
    assert len(plan._answers) == len(lines)
    assert plan.names == ["s1", "s2"] and plan.last == [3, 4]


def test_sniff_recognises_request_response_lines(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "log.jsonl", two_interleaved_conversations())
    head = path.read_text()[:65536]
    assert chat_log.sniff(head, path)
    assert not cassette.sniff(head, path)
    assert not session_steps.sniff(head, path)
    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    example = fixtures / "session_steps" / "example.json"
    assert not chat_log.sniff(example.read_text()[:65536], example)
    # A first line longer than the head is judged by how it starts.
    assert chat_log.sniff(head.splitlines()[0][:200], path)


def test_shipped_example_mixes_both_apis_into_three_sessions() -> None:
    example = Path(__file__).resolve().parent.parent / "fixtures" / "chat_log" / "example.jsonl"
    assert chat_log.sniff(example.read_text()[:65536], example)
    sessions, skips = read(example)
    assert sum(skips.counts.values()) == 0
    # Emitted in the order their last lines come: line 4, line 6, line 7.
    assert [(session.id, [step.id for step in session.steps()]) for session in sessions] == [
        ("example.jsonl#line-1", ["line-1", "line-4"]),
        ("example.jsonl#line-2", ["line-2", "line-6"]),
        ("r1", ["r1", "r2", "r3"]),
    ]
    loop = sessions[0].steps()
    assert loop[0].ended_at == datetime(2025, 4, 1, 9, 0, 0, 640000, tzinfo=UTC)
    assert loop[1].ended_at == datetime(2025, 4, 1, 9, 0, 1, 730000, tzinfo=UTC)
    assert [step.llm.reconstructed for step in sessions[2].steps() if step.llm] == [
        False,
        True,
        True,
    ]


@pytest.mark.parametrize("kind", [[], {"name": "function"}, 7])
def test_a_responses_tool_whose_type_is_not_a_string_is_skipped_as_malformed(
    tmp_path: Path, kind: object
) -> None:
    first = responses_lines()[0]
    tool = {"type": kind, "name": "lookup", "parameters": {}}
    odd = {**first, "request": {**first["request"], "tools": [tool]}}
    sessions, skips = read(write_lines(tmp_path / "log.jsonl", [odd]))
    assert dict(skips.counts) == {"malformed_tool_definition": 1}
    assert [(skip.reason, skip.location) for skip in skips.examples] == [
        ("malformed_tool_definition", "line 1")
    ]
    assert sessions == []
