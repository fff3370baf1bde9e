"""VCR cassettes: the real OpenAI tool-calling cassette becomes one two-step conversation."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_backtest.errors import InputError
from agent_backtest.formats import cassette, session_steps
from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.trace import Message, Session, ToolCall, dump_record

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CASSETTE = FIXTURES / "cassette" / "test_chat_completion_tool_calls_with_content.yaml"
SEATTLE = ToolCall(
    id="call_JpNb8OiAkbIbHzDggfpdDHpi",
    name="get_current_weather",
    arguments={"location": "Seattle, WA"},
)
SAN_FRANCISCO = ToolCall(
    id="call_vaFQc3zK6hHTRZKXRI5Eo2cJ",
    name="get_current_weather",
    arguments={"location": "San Francisco, CA"},
)


def read(path: Path, strict: bool = False) -> tuple[list[Session], SkipLog]:
    """All sessions of a cassette and the skip log."""
    skips = SkipLog(str(path), strict=strict)
    return list(cassette.read(path, ReadOptions(strict=strict), skips)), skips


def write_cassette(path: Path, interactions: list[Any]) -> Path:
    """A cassette file holding these interactions."""
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}))
    return path


def fixture_interactions() -> list[dict[str, Any]]:
    """The interactions of the shipped cassette, as plain data to modify."""
    return yaml.safe_load(CASSETTE.read_text())["interactions"]


def test_shipped_cassette_is_one_session_with_two_llm_steps() -> None:
    sessions, skips = read(CASSETTE)
    assert len(sessions) == 1
    assert sum(skips.counts.values()) == 0
    steps = sessions[0].steps()
    assert [step.kind for step in steps] == ["llm", "llm"]
    assert sessions[0].source is not None and sessions[0].source.format == "cassette"
    assert len(sessions[0].turns) == 1
    assert sessions[0].turns[0].user_input == (
        "What's the weather in Seattle and San Francisco today?"
    )


def test_first_step_golden_is_two_parallel_tool_calls() -> None:
    step = read(CASSETTE)[0][0].steps()[0]
    assert step.llm is not None and step.llm.response is not None
    request, response = step.llm.request, step.llm.response
    assert request.model == "gpt-4o-mini"
    assert [m.role for m in request.messages] == ["system", "user"]
    assert request.tools is not None and [tool.name for tool in request.tools] == [
        "get_current_weather"
    ]
    assert request.tools[0].parameters is not None
    assert request.tools[0].parameters["required"] == ["location"]
    assert request.tool_choice == "auto"
    assert response.message.tool_calls == [SEATTLE, SAN_FRANCISCO]
    assert response.message.content is None
    assert response.finish_reason == "tool_calls"
    assert response.model == "gpt-4o-mini-2024-07-18"
    assert response.usage is not None
    assert (
        response.usage.input_tokens,
        response.usage.output_tokens,
        response.usage.total_tokens,
    ) == (75, 51, 126)


def test_second_step_sees_the_full_history_and_answers_in_text() -> None:
    step = read(CASSETTE)[0][0].steps()[1]
    assert step.llm is not None and step.llm.response is not None
    request, response = step.llm.request, step.llm.response
    assert request.messages == [
        Message(role="system", content="You're a helpful assistant."),
        Message(role="user", content="What's the weather in Seattle and San Francisco today?"),
        Message(role="assistant", tool_calls=[SEATTLE, SAN_FRANCISCO]),
        Message(
            role="tool",
            content="50 degrees and raining",
            tool_call_id="call_JpNb8OiAkbIbHzDggfpdDHpi",
        ),
        Message(
            role="tool",
            content="70 degrees and sunny",
            tool_call_id="call_vaFQc3zK6hHTRZKXRI5Eo2cJ",
        ),
    ]
    assert request.tools == []  # the body had no tools: none offered, not unrecorded
    assert request.tool_choice is None
    assert response.message.text().startswith("Today, the weather in Seattle is 50 degrees")
    assert response.finish_reason == "stop"
    assert response.model == "gpt-4o-mini-2024-07-18"
    assert response.usage is not None and response.usage.input_tokens == 99


def test_no_header_reaches_the_sessions() -> None:
    dumped = b"".join(dump_record(session) for session in read(CASSETTE)[0]).lower()
    for secret in (
        b"authorization",
        b"bearer",
        b"test_openai_api_key",
        b"cookie",
        b"openai-organization",
    ):
        assert secret not in dumped


def test_sniff_tells_cassettes_from_other_formats() -> None:
    head = CASSETTE.read_text()[:65536]
    assert cassette.sniff(head, CASSETTE)
    example = FIXTURES / "session_steps" / "example.json"
    assert not cassette.sniff(example.read_text()[:65536], example)
    assert not session_steps.sniff(head, CASSETTE)


def test_other_requests_errors_and_unreadable_bodies_are_skipped(tmp_path: Path) -> None:
    first, second = fixture_interactions()
    models = copy.deepcopy(first)
    models["request"].update(method="GET", uri="https://api.openai.com/v1/models?key=sk-secret")
    limited = copy.deepcopy(first)
    limited["response"]["status"] = {"code": 429, "message": "Too Many Requests"}
    garbled = copy.deepcopy(first)
    garbled["response"]["body"]["string"] = b"\x89PNG not json"
    path = write_cassette(tmp_path / "mixed.yaml", [models, first, limited, garbled, second])
    sessions, skips = read(path)
    assert dict(skips.counts) == {
        "not_chat_completion": 1,
        "error_response": 1,
        "undecodable_body": 1,
    }
    assert [(skip.reason, skip.location) for skip in skips.examples] == [
        ("not_chat_completion", "interactions[0]"),
        ("error_response", "interactions[2]"),
        ("undecodable_body", "interactions[3]"),
    ]
    assert "sk-secret" not in skips.examples[0].detail
    assert "429" in skips.examples[1].detail
    assert len(sessions) == 1
    assert [step.id for step in sessions[0].steps()] == ["interaction-1", "interaction-4"]


def test_gzip_binary_body_is_decoded(tmp_path: Path) -> None:
    first, second = fixture_interactions()
    answer = second["response"]["body"]["string"]
    second["response"]["body"]["string"] = gzip.compress(answer.encode())  # dumped as !!binary
    path = write_cassette(tmp_path / "gzip.yaml", [first, second])
    assert "!!binary" in path.read_text()
    sessions, skips = read(path)
    assert sum(skips.counts.values()) == 0
    step = sessions[0].steps()[1]
    assert step.llm is not None and step.llm.response is not None
    assert (
        step.llm.response.message.text() == json.loads(answer)["choices"][0]["message"]["content"]
    )


def test_strict_turns_a_skip_into_an_input_error(tmp_path: Path) -> None:
    first, second = fixture_interactions()
    second["response"]["status"]["code"] = 500
    path = write_cassette(tmp_path / "error.yaml", [first, second])
    with pytest.raises(InputError) as caught:
        read(path, strict=True)
    assert caught.value.location == "interactions[1]"
    assert "error_response" in str(caught.value)


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("interactions:\n- request:\n    body: '{}'\n    method: [POST\nversion: 1\n")
    with pytest.raises(InputError) as caught:
        read(path)
    assert caught.value.location is not None
    assert caught.value.location.startswith("line 5 ")
    assert str(path) in str(caught.value)


def test_a_yaml_document_that_is_not_a_cassette_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- just\n- a list\n")
    with pytest.raises(InputError) as caught:
        read(path)
    assert caught.value.location == "$"
