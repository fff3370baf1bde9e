"""Places in a span that hold a call's answer or settings outside the usual attributes, and the
reason a span that shows a model call gets when no dialect can read it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_backtest.formats import otlp
from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.trace import LLMCall, Step
from tests.formats.conformance import assert_replayable, units_of
from tests.formats.otlp_json import span, traces_data, write_document

TRACE = "5b8efff798038103d269b633813fc60c"
PERSON_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The name of the person"},
        "age": {"type": "number", "description": "The age of the person"},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}


def llm_steps(path: Path) -> list[Step]:
    """The LLM steps of the file's only session."""
    (session,) = otlp.read(path, ReadOptions(), SkipLog(str(path)))
    return [step for step in session.steps() if step.kind == "llm"]


def one_call(tmp_path: Path, spans: list[dict[str, Any]]) -> LLMCall:
    """The one LLM call of a trace holding ``spans``."""
    path = write_document(tmp_path / "trace.json", traces_data(spans))
    (step,) = llm_steps(path)
    assert step.llm is not None
    return step.llm


def event(name: str, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A GenAI message event with its body as JSON text, as Semantic Kernel writes it."""
    return name, {"gen_ai.event.content": json.dumps(body)}


def test_assistant_events_that_end_the_span_are_its_answer(tmp_path: Path) -> None:
    events = [
        event("gen_ai.system.message", {"role": "system", "content": "You find flights."}),
        event("gen_ai.user.message", {"role": "user", "content": "Flights to Oslo on Friday?"}),
        event("gen_ai.assistant.message", {"role": "assistant", "content": "Let me look."}),
        event(
            "gen_ai.assistant.message",
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "call_7",
                        "type": "function",
                        "function": {"name": "search_flights", "arguments": '{"to": "OSL"}'},
                    }
                ],
            },
        ),
    ]
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}
    call = one_call(tmp_path, [span(TRACE, "00f067aa0ba902b7", "chat", attributes, events=events)])
    assert [m.role for m in call.request.messages] == ["system", "user"]
    assert call.response is not None
    assert call.response.message.text() == "Let me look."
    assert [(c.name, c.arguments) for c in call.response.message.tool_calls or []] == [
        ("search_flights", {"to": "OSL"})
    ]
    assert call.unusable is None
    assert any("2 assistant message events" in note for note in call.notes)


def test_a_choice_event_keeps_earlier_assistant_events_in_the_history(tmp_path: Path) -> None:
    events = [
        event("gen_ai.user.message", {"role": "user", "content": "Hi"}),
        event("gen_ai.assistant.message", {"role": "assistant", "content": "Hello!"}),
        event("gen_ai.user.message", {"role": "user", "content": "Bye"}),
        ("gen_ai.choice", {"index": 0, "finish_reason": "stop", "message": '{"content": "Bye!"}'}),
    ]
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}
    call = one_call(tmp_path, [span(TRACE, "00f067aa0ba902b7", "chat", attributes, events=events)])
    assert [m.role for m in call.request.messages] == ["user", "assistant", "user"]
    assert call.response is not None and call.response.message.text() == "Bye!"


def generate_object_spans() -> list[dict[str, Any]]:
    """An AI SDK ``generateObject`` turn: the outer span with the schema, the model call inside."""
    outer = span(
        TRACE,
        "1000000000000001",
        "ai.generateObject",
        {
            "ai.operationId": "ai.generateObject",
            "ai.schema": json.dumps(PERSON_SCHEMA),
            "ai.schema.name": "Person",
            "ai.settings.output": "object",
            "ai.response.object": '{"name":"John Doe","age":30}',
        },
        end_ms=40,
    )
    inner = span(
        TRACE,
        "1000000000000002",
        "ai.generateObject.doGenerate",
        {
            "ai.operationId": "ai.generateObject.doGenerate",
            "ai.model.id": "gpt-4o-mini",
            "ai.model.provider": "openai.chat",
            "ai.prompt.messages": json.dumps(
                [{"role": "user", "content": [{"type": "text", "text": "Generate a person"}]}]
            ),
            "ai.settings.mode": "json",
            "ai.response.object": '{ "name": "John Doe", "age": 30 }',
            "ai.response.finishReason": "stop",
            "ai.usage.promptTokens": 15,
            "ai.usage.completionTokens": 25,
        },
        parent="1000000000000001",
        start_ms=5,
        end_ms=35,
    )
    return [outer, inner]


def test_a_generate_object_call_answers_with_its_object_and_asks_for_its_schema(
    tmp_path: Path,
) -> None:
    path = write_document(tmp_path / "trace.json", traces_data(generate_object_spans()))
    (step,) = llm_steps(path)
    call = step.llm
    assert call is not None and call.response is not None
    assert json.loads(call.response.message.text()) == {"name": "John Doe", "age": 30}
    assert call.request.params["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Person", "schema": PERSON_SCHEMA},
    }
    assert call.unusable is None
    units = units_of(path)
    assert len(units) == 1
    assert_replayable(units)


def test_legacy_openllmetry_stop_sequences_are_request_parameters(tmp_path: Path) -> None:
    attributes = {
        "llm.request.type": "chat",
        "gen_ai.request.model": "gpt-3.5-turbo",
        "llm.chat.stop_sequences": ["\n\nHuman:"],
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "Count to three.",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "One, two, three.",
    }
    call = one_call(tmp_path, [span(TRACE, "00f067aa0ba902b7", "openai.chat", attributes)])
    assert call.request.params["stop"] == ["\n\nHuman:"]


def test_a_model_call_with_content_no_dialect_reads_names_what_it_holds(tmp_path: Path) -> None:
    attributes = {
        "gen_ai.response.model": "gpt-4o",
        "gen_ai.usage.input_tokens": 12,
        "input": '"user: where is my parcel?"',
        "output": "It left the depot this morning.",
    }
    call = one_call(tmp_path, [span(TRACE, "00f067aa0ba902b7", "flattened call", attributes)])
    assert call.unusable is not None
    assert call.unusable.reason == "unread_content"
    assert "gen_ai.response.model, gen_ai.usage.*" in call.unusable.detail
    assert call.unusable.detail.endswith("no dialect reads: input, output")


def test_a_model_call_without_content_says_where_messages_were_looked_for(tmp_path: Path) -> None:
    attributes = {"gen_ai.request.model": "gpt-4o", "gen_ai.usage.output_tokens": 7}
    call = one_call(tmp_path, [span(TRACE, "00f067aa0ba902b7", "call", attributes)])
    assert call.unusable is not None
    assert call.unusable.reason == "no_input_messages"
    assert call.unusable.detail.startswith(
        "records a model call (gen_ai.request.model, gen_ai.usage.*)"
    )
    assert "gen_ai.input.messages" in call.unusable.detail
