"""GenAI spans read as plain values give the same sessions, bytes and skips as the general
readers, and a span of any other shape is left to them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.formats import dialects, genai_current, plain_steps, spans
from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.formats.collection import SessionStream
from agent_backtest.formats.registry import detect
from agent_backtest.formats.span_model import Span
from agent_backtest.trace import ToolDef, dump_record
from tests.conftest import FIXTURES
from tests.formats.otlp_json import span, traces_data, write_lines

TRACE = f"{7:032x}"
AGENT, CHAT, TOOL = f"{1:016x}", f"{2:016x}", f"{3:016x}"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_flights",
            "description": "Find flights.",
            "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
        },
    }
]


def chat_attributes(changes: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chat span's attributes in the current GenAI form; ``changes`` replace attributes, or
    drop them when None."""
    values: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.response.model": "gpt-4o-2024-08-06",
        "gen_ai.provider.name": "openai",
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "Be brief."}]),
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "Fly me to Denver."}]}]
        ),
        "gen_ai.output.messages": json.dumps(
            [
                {
                    "role": "assistant",
                    "finish_reason": "tool_call",
                    "parts": [
                        {
                            "type": "tool_call",
                            "id": "call_1",
                            "name": "search_flights",
                            "arguments": {"to": "DEN"},
                        }
                    ],
                }
            ]
        ),
        "gen_ai.tool.definitions": json.dumps(TOOLS),
        "gen_ai.usage.input_tokens": 80,
        "gen_ai.usage.output_tokens": 12,
    }
    for key, value in (changes or {}).items():
        if value is None:
            values.pop(key, None)
        else:
            values[key] = value
    return values


def trace_file(tmp_path: Path, chat: dict[str, Any], tool: dict[str, Any] | None = None) -> Path:
    """An agent span, the chat span and a tool span, on two lines."""
    tool = tool or {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "search_flights",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.arguments": '{"to": "DEN"}',
        "gen_ai.tool.call.result": "UA 100",
    }
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "booking"}
    spans = [
        span(TRACE, AGENT, "invoke_agent booking", agent, start_ms=0, end_ms=50),
        span(TRACE, CHAT, "chat gpt-4o", chat, parent=AGENT, start_ms=1),
        span(TRACE, TOOL, "execute_tool search_flights", tool, parent=AGENT, start_ms=10),
    ]
    return write_lines(tmp_path / "trace.jsonl", [traces_data(spans[:2]), traces_data(spans[2:])])


def read_lines(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[bytes], int, dict]:
    """The sessions of a file as written, how many of its spans were read as plain values,
    and the skips by reason."""
    read_plain = spans._plain_step
    taken: list[str] = []

    def counted(span: Span, by_id: dict[str, Span], kinds: dict[str, Any]) -> Any:
        step = read_plain(span, by_id, kinds)
        if step is not None:
            taken.append(span.span_id)
        return step

    with monkeypatch.context() as patch:
        patch.setattr(spans, "_plain_step", counted)
        lines, skips = written(path)
    return lines, len(taken), skips


def read_general(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[bytes], dict]:
    """The sessions as the general readers alone make them, as written, and the skips."""
    with monkeypatch.context() as patch:
        patch.setattr(spans, "_plain_step", lambda span, by_id, kinds: None)
        return written(path)


def written(path: Path) -> tuple[list[bytes], dict[str, int]]:
    """The sessions of a file (read by the reader its content names) as written, and the
    skips by reason."""
    skips = SkipLog(str(path))
    sessions = list(detect(path).read(path, ReadOptions(), skips))
    return [dump_record(session) for session in sessions], dict(skips.counts)


def test_common_shape_is_read_as_plain_values_and_written_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = trace_file(tmp_path, chat_attributes())
    lines, plain, skips = read_lines(path, monkeypatch)
    assert plain == 3  # the agent, chat and tool spans
    assert (lines, skips) == read_general(path, monkeypatch)
    step = json.loads(lines[0])["turns"][0]["steps"][1]
    assert step["llm"]["request"]["messages"][0] == {"role": "system", "content": "Be brief."}


VARIANTS: dict[str, dict[str, Any]] = {
    "instructions as text": {"gen_ai.system_instructions": "Be brief."},
    "instructions as several parts": {
        "gen_ai.system_instructions": json.dumps(
            [{"type": "text", "content": "a"}, {"type": "text", "content": "b"}]
        )
    },
    "no instructions": {"gen_ai.system_instructions": None},
    "no tools": {"gen_ai.tool.definitions": None},
    "no tools recorded as none": {"gen_ai.tool.definitions": "[]"},
    "tools not JSON": {"gen_ai.tool.definitions": "[{"},
    "history with calls and results": {
        "gen_ai.input.messages": json.dumps(
            [
                {"role": "user", "parts": [{"type": "text", "content": "Go."}]},
                {
                    "role": "assistant",
                    "parts": [
                        {"type": "text", "content": "Searching."},
                        {"type": "tool_call", "id": "c0", "name": "search_flights"},
                    ],
                },
                {
                    "role": "tool",
                    "parts": [{"type": "tool_call_response", "id": "c0", "response": "none"}],
                },
            ]
        )
    },
    "a tool result without its call id": {
        "gen_ai.input.messages": json.dumps(
            [
                {"role": "user", "content": "Go."},
                {"role": "assistant", "parts": [{"type": "tool_call", "name": "search_flights"}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "response": "none"}]},
            ]
        )
    },
    "tool results of every shape": {
        "gen_ai.input.messages": json.dumps(
            [
                {"role": "user", "content": "Go."},
                {
                    "role": "tool",
                    "parts": [
                        {"type": "tool_call_response", "id": "a", "response": {"seats": 2}},
                        {"type": "tool_call_response", "id": "b", "result": None},
                        {
                            "type": "tool-result",
                            "toolCallId": "c",
                            "toolName": "f",
                            "output": {"type": "text", "value": "ok"},
                        },
                        {
                            "type": "tool_call_response",
                            "id": "d",
                            "response": [{"type": "text", "text": "x"}, {"type": "image"}],
                        },
                    ],
                },
            ]
        )
    },
    "a tool message with text beside its result": {
        "gen_ai.input.messages": json.dumps(
            [
                {"role": "user", "content": "Go."},
                {
                    "role": "tool",
                    "parts": [
                        {"type": "text", "content": "note"},
                        {"type": "tool_call_response", "id": "a", "response": "ok"},
                    ],
                },
            ]
        )
    },
    "a tool message with a name": {
        "gen_ai.input.messages": json.dumps(
            [
                {"role": "user", "content": "Go."},
                {
                    "role": "tool",
                    "name": "f",
                    "parts": [{"type": "tool_call_response", "id": "a", "response": "ok"}],
                },
            ]
        )
    },
    "several text parts": {
        "gen_ai.input.messages": json.dumps(
            [
                {
                    "role": "user",
                    "parts": [
                        {"type": "text", "content": "One."},
                        {"type": "text", "content": "Two."},
                    ],
                }
            ]
        )
    },
    "a system message beside the instructions": {
        "gen_ai.input.messages": json.dumps(
            [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi."}]
        )
    },
    "content as a string": {
        "gen_ai.input.messages": json.dumps([{"role": "user", "content": "Hi."}])
    },
    "a message of an unknown role": {
        "gen_ai.input.messages": json.dumps([{"role": "robot", "content": "Hi."}])
    },
    "a text part that is not text": {
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": 3}]}]
        )
    },
    "input not JSON": {"gen_ai.input.messages": "[not json"},
    "input not a list": {"gen_ai.input.messages": '{"role": "user"}'},
    "no output": {"gen_ai.output.messages": None},
    "empty output": {"gen_ai.output.messages": "[]"},
    "output as plain text": {"gen_ai.output.messages": "It is sunny."},
    "an empty answer": {"gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": []}])},
    "two output messages": {
        "gen_ai.output.messages": json.dumps(
            [
                {"role": "assistant", "parts": [{"type": "text", "content": "A."}]},
                {"role": "assistant", "parts": [{"type": "text", "content": "B."}]},
            ]
        )
    },
    "an answer by the user": {
        "gen_ai.output.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "A."}]}]
        )
    },
    "a call without a name": {
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "tool_call", "id": "c", "name": ""}]}]
        )
    },
    "a call with arguments as bad JSON": {
        "gen_ai.output.messages": json.dumps(
            [
                {
                    "role": "assistant",
                    "parts": [{"type": "tool_call", "name": "f", "arguments": "{oops"}],
                }
            ]
        )
    },
    "a call in the function shape": {
        "gen_ai.output.messages": json.dumps(
            [
                {
                    "role": "assistant",
                    "parts": [{"type": "function_call", "call_id": "c9", "id": "i", "name": "f"}],
                }
            ]
        )
    },
    "alternatives": {"gen_ai.request.choice.count": 2},
    "sampling parameters": {"gen_ai.request.temperature": 0.25, "gen_ai.request.seed": 7},
    "a finish reason attribute": {"gen_ai.response.finish_reasons": ["stop"]},
    "a response id": {"gen_ai.response.id": "resp_1"},
    "a conversation continued": {"gen_ai.conversation.id": "resp_0"},
    "a model name of the wrong type": {"gen_ai.request.model": 4},
    "usage as text": {"gen_ai.usage.input_tokens": "80"},
    "usage not a number": {"gen_ai.usage.input_tokens": "many"},
    "an attribute another dialect reads": {"llm.model_name": "gpt-4o"},
    "a credential attribute": {"server.address": "Bearer abcdefghijklmnopqrstuvwxyz012345"},
    "an integer past 64 bits": {"gen_ai.agent.id": 2**70},
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_shape_reads_as_the_general_readers_read_it(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = trace_file(tmp_path, chat_attributes(VARIANTS[name]))
    lines, _, skips = read_lines(path, monkeypatch)
    assert (lines, skips) == read_general(path, monkeypatch)


TOOL_VARIANTS: dict[str, dict[str, Any]] = {
    "no name": {"gen_ai.operation.name": "execute_tool"},
    "a call id of the wrong type": {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.call.id": 5,
    },
    "arguments as bad JSON": {"gen_ai.tool.name": "f", "gen_ai.tool.call.arguments": "{"},
    "arguments as an object": {"gen_ai.tool.name": "f", "gen_ai.tool.call.arguments": {"a": 1}},
    "an AI SDK tool call": {"gen_ai.tool.name": "f", "ai.operationId": "ai.toolCall"},
}


@pytest.mark.parametrize("name", sorted(TOOL_VARIANTS))
def test_every_tool_shape_reads_as_the_general_readers_read_it(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = trace_file(tmp_path, chat_attributes(), TOOL_VARIANTS[name])
    lines, _, skips = read_lines(path, monkeypatch)
    assert (lines, skips) == read_general(path, monkeypatch)


def test_a_failed_tool_keeps_its_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f"}
    path = trace_file(tmp_path, chat_attributes(), tool)
    raw = [json.loads(line) for line in path.read_text().splitlines()]
    raw[1]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["status"] = {
        "code": 2,
        "message": "timed out",
    }
    write_lines(path, raw)
    lines, plain, skips = read_lines(path, monkeypatch)
    assert plain == 3
    assert json.loads(lines[0])["turns"][0]["steps"][2]["tool"]["error"] == "timed out"
    assert (lines, skips) == read_general(path, monkeypatch)


def span_fixtures() -> list[Path]:
    """Every fixture whose reader builds its sessions from spans (OTLP, Langfuse's exports)."""
    found = []
    for path in sorted(FIXTURES.rglob("*.json*")):
        try:
            if detect(path).FORMAT in ("otlp", "langfuse"):
                found.append(path)
        except Exception:  # files of no format are read by neither
            continue
    return found


@pytest.mark.parametrize("path", span_fixtures(), ids=lambda path: path.name)
def test_fixtures_read_the_same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines, _, skips = read_lines(path, monkeypatch)
    assert (lines, skips) == read_general(path, monkeypatch)


@pytest.mark.parametrize(
    ("recording", "plain"),
    [
        ("frameworks/langfuse/beeai-2025-08-01.trace.json", 21),
        ("frameworks/langfuse/langgraph-js-2025-10-30.trace.json", 18),
        ("frameworks/langfuse/koog-2025-08-26.trace.json", 9),
        ("frameworks/otlp/litellm-otel-callback.trace.json", 1),
    ],
)
def test_other_projects_recordings_take_the_plain_path(
    recording: str, plain: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = FIXTURES / recording
    lines, taken, skips = read_lines(path, monkeypatch)
    assert taken == plain
    assert (lines, skips) == read_general(path, monkeypatch)


def test_no_other_dialect_reads_the_attributes_taken_as_plain_values() -> None:
    usage = {key for names in genai_current.USAGE_KEYS.values() for key in names}
    numbers = {*genai_current.REQUEST_PARAMS, *usage} - {"gen_ai.request.stop_sequences"}
    attributes = {key: 1 if key in numbers else "x" for key in plain_steps.GENAI_KEYS}
    attributes["gen_ai.input.messages"] = json.dumps([{"role": "user", "content": "Hi."}])
    attributes["gen_ai.output.messages"] = json.dumps([{"role": "assistant", "content": "Hi."}])
    attributes["gen_ai.tool.definitions"] = json.dumps(TOOLS)
    readings, _ = dialects.call_readings(Span(TRACE, CHAT, "chat", "here", attributes=attributes))
    assert [reading.dialect for reading in readings] == ["genai"]


@pytest.mark.parametrize(
    "options",
    [
        ReadOptions(recorded_model="gpt-4o-mini"),
        ReadOptions(tools=[ToolDef(name="lookup")]),
    ],
    ids=["recorded model", "tools"],
)
def test_reading_options_that_change_a_session_are_in_what_is_written(
    options: ReadOptions, tmp_path: Path
) -> None:
    changes = {"gen_ai.request.model": None, "gen_ai.response.model": None}
    path = trace_file(tmp_path, chat_attributes({**changes, "gen_ai.tool.definitions": None}))
    stream = SessionStream([path], options)
    (session,) = list(stream)
    call = json.loads(stream.line)["turns"][0]["steps"][1]["llm"]
    assert call == json.loads(dump_record(session))["turns"][0]["steps"][1]["llm"]
    if options.recorded_model:
        assert call["request"]["model"] == "gpt-4o-mini"
        assert call["notes"] == ["model from --recorded-model"]
    else:
        assert call["request"]["tools"] == [{"name": "lookup"}]
        assert call["tools_supplied"] is True


def test_a_history_of_calls_and_results_is_read_as_plain_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = trace_file(tmp_path, chat_attributes(VARIANTS["history with calls and results"]))
    assert read_lines(path, monkeypatch)[1] == 3
