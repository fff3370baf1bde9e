"""The Langfuse export reader, on a real Microsoft Agent Framework trace and on variations."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.errors import InputError
from agent_backtest.formats import langfuse
from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.trace import Session, Step
from agent_backtest.trace.openai_wire import message_from_openai
from tests.conftest import FIXTURES

TRACE = FIXTURES / "traces" / "microsoft-agent-2025-12-17.trace.json"
CHATML = FIXTURES / "traces" / "microsoft-agent-2025-12-17.chatml.json"
FIRST_CHAT, SECOND_CHAT, AGENT, TOOL = (
    "2406e8343fd49c0e",
    "b0913e7cd82d72b8",
    "4cd6caa32861956a",
    "a2de97aac476c036",
)


def read(path: Path, strict: bool = False) -> tuple[list[Session], SkipLog]:
    skips = SkipLog(str(path), strict=strict)
    return list(langfuse.read(path, ReadOptions(), skips)), skips


def chatml(observation: str, side: str) -> list[Any]:
    """Langfuse's own normalisation of one observation, as canonical messages."""
    data = json.loads(CHATML.read_text())[observation][side]["data"]
    return [message_from_openai(message).model_dump() for message in data]


@pytest.fixture
def steps() -> dict[str, Step]:
    (session,), _ = read(TRACE, strict=True)
    return {step.id: step for step in session.steps()}


def test_sniff() -> None:
    assert langfuse.sniff(TRACE.read_text()[:65536], TRACE)
    assert langfuse.sniff('[\n  {"trace": {"id": "t"', TRACE)  # a list of exports
    assert not langfuse.sniff('{"resourceSpans": []}', TRACE)
    assert not langfuse.sniff('{"messages": []}', TRACE)


def test_agent_framework_trace_steps(steps: dict[str, Step]) -> None:
    assert [(s.id, s.kind) for s in steps.values()] == [
        (AGENT, "agent"),
        (FIRST_CHAT, "llm"),
        (TOOL, "tool"),
        (SECOND_CHAT, "llm"),
    ]
    agent_name = "171105b7-59dd-49c0-9677-0b95395aa46a"
    assert steps[FIRST_CHAT].name == steps[SECOND_CHAT].name == agent_name
    assert steps[FIRST_CHAT].parent_id == AGENT


def test_first_call_gets_the_agent_instructions(steps: dict[str, Step]) -> None:
    call = steps[FIRST_CHAT].llm
    # The chat span recorded only the user message; the agent span holds the instructions.
    assert [m.model_dump() for m in call.request.messages] == chatml(AGENT, "input")
    assert any("gen_ai.system_instructions" in note for note in call.notes)
    assert not call.reconstructed
    (tool_call,) = call.response.message.tool_calls
    assert (tool_call.name, tool_call.arguments) == ("get_weather", {"location": "Tokyo, Japan"})
    assert tool_call.id == "call_CwaJHuXTm9dmHFQPlVbqyzJ0"
    assert call.response.message.model_dump() == chatml(FIRST_CHAT, "output")[0]


def test_second_call_history_is_rebuilt(steps: dict[str, Step]) -> None:
    call = steps[SECOND_CHAT].llm
    assert call.reconstructed
    expected = chatml(AGENT, "input") + chatml(FIRST_CHAT, "output") + chatml(SECOND_CHAT, "input")
    assert [m.model_dump() for m in call.request.messages] == expected
    assert [m.role for m in call.request.messages] == ["system", "user", "assistant", "tool"]
    assert call.response.message.model_dump() == chatml(SECOND_CHAT, "output")[0]
    assert any(FIRST_CHAT in note for note in call.notes)


def test_models_tools_usage_and_timing(steps: dict[str, Step]) -> None:
    first, second = steps[FIRST_CHAT], steps[SECOND_CHAT]
    for step in (first, second):
        assert step.llm.request.model == "gpt-5-mini"
        assert step.llm.response.model == "gpt-5-mini-2025-08-07"
        assert [tool.name for tool in step.llm.request.tools] == ["get_weather"]
        assert step.llm.request.tools[0].parameters["required"] == ["location"]
        assert step.llm.provider == "openai"
    assert (first.llm.response.usage.input_tokens, first.llm.response.usage.output_tokens) == (
        77,
        86,
    )
    assert (second.llm.response.usage.input_tokens, second.llm.response.usage.output_tokens) == (
        216,
        20,
    )
    assert first.started_at == datetime(2025, 12, 17, 9, 37, 37, 260000, tzinfo=UTC)
    assert first.ended_at == datetime(2025, 12, 17, 9, 37, 40, 549000, tzinfo=UTC)
    assert second.started_at.tzinfo is not None


def test_tool_execution(steps: dict[str, Step]) -> None:
    tool = steps[TOOL].tool
    assert tool.name == "get_weather"
    assert tool.call_id == "call_CwaJHuXTm9dmHFQPlVbqyzJ0"
    assert tool.arguments == {"location": "Tokyo, Japan"}
    assert tool.result == "The weather in Tokyo, Japan is stormy with a high of 23°C."


def test_turn_and_session() -> None:
    (session,), _ = read(TRACE)
    assert session.id == "8e419d3288419b5d944270505640e183"  # no sessionId: the trace id
    (turn,) = session.turns
    assert turn.user_input == "What's the weather in Tokyo?"
    assert turn.agent_output == "Current conditions in Tokyo, Japan: stormy, high around 23°C."
    assert session.source.format == "langfuse"


def test_exports_sharing_a_session_id_are_turns_of_one_session(tmp_path: Path) -> None:
    export = json.loads(TRACE.read_text())
    later = json.loads(TRACE.read_text())
    later["trace"]["id"] = "1" * 32
    for observation in later["observations"]:
        observation["traceId"] = "1" * 32
        observation["startTime"] = observation["startTime"].replace("09:37", "10:37")
    for item in (export, later):
        item["trace"]["sessionId"] = "chat-9"
    path = tmp_path / "exports.jsonl"
    path.write_text(json.dumps(later) + "\n" + json.dumps(export) + "\n")
    (session,), _ = read(path)
    assert session.id == "chat-9"
    assert session.metadata["trace_ids"] == ["8e419d3288419b5d944270505640e183", "1" * 32]
    assert [turn.index for turn in session.turns] == [0, 1]


def test_openai_shaped_observation_without_attributes(tmp_path: Path) -> None:
    observation = {
        "id": "obs-1",
        "traceId": "t-1",
        "type": "GENERATION",
        "name": "ChatOpenAI",
        "startTime": "2025-01-02T03:04:05.000Z",
        "endTime": "2025-01-02T03:04:06.500Z",
        "model": "gpt-4o-mini",
        "modelParameters": {"temperature": 0.1},
        "usageDetails": {"input": 12, "output": 3, "total": 15},
        "input": json.dumps(
            {
                "messages": [
                    {"role": "system", "content": "Be short."},
                    {"role": "user", "content": "Hi"},
                ]
            }
        ),
        "output": json.dumps({"role": "assistant", "content": "Hello."}),
        "parentObservationId": None,
        "level": "ERROR",
        "statusMessage": "rate limited",
        "metadata": {},
    }
    path = tmp_path / "list.json"
    path.write_text(
        json.dumps([{"trace": {"id": "t-1", "sessionId": None}, "observations": [observation]}])
    )
    (session,), _ = read(path)
    (step,) = session.steps()
    assert step.kind == "llm" and step.status == "error" and step.error == "rate limited"
    call = step.llm
    assert [m.role for m in call.request.messages] == ["system", "user"]
    assert call.request.model == "gpt-4o-mini"
    assert call.request.params == {"temperature": 0.1}
    assert call.request.tools is None
    assert call.response.message.content == "Hello."
    assert call.response.usage.input_tokens == 12
    assert "gen_ai.input.messages" not in step.attributes  # filled in, not recorded


def test_not_an_export(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"observations": "none"}')
    with pytest.raises(InputError, match="Langfuse trace export"):
        read(path)
