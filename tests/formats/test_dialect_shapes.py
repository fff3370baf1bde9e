"""Each dialect and message shape that used to give nothing, a wrong golden or a broken request.

The spans are written by hand from each instrumentation's documented attribute names, one
span per case, and read through the OTLP reader and the units layer as a user's file would be.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_backtest.api import ReadingOptions
from agent_backtest.formats import otlp
from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.trace import LLMCall
from agent_backtest.trace.openai_wire import chat_payload
from agent_backtest.units import AgentConfig
from agent_backtest.units.source import UnitSource
from tests.formats.otlp_json import span, traces_data, write_document

TRACE = "5b8efff798038103d269b633813fc60c"
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}


def write(tmp_path: Path, *spans: dict[str, Any]) -> Path:
    return write_document(tmp_path / "trace.json", traces_data(list(spans)))


def one_span(attributes: dict[str, Any], name: str = "chat") -> dict[str, Any]:
    return span(TRACE, "eee19b7ec3c1b174", name, attributes)


def calls(path: Path) -> list[LLMCall]:
    skips = SkipLog(str(path))
    sessions = list(otlp.read(path, ReadOptions(), skips))
    assert not skips.counts, skips.examples
    return [step.llm for s in sessions for step in s.steps() if step.llm is not None]


def genai_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def source_of(path: Path) -> UnitSource:
    return UnitSource([path], ReadingOptions().read_options(), AgentConfig())


def test_litellm_function_call_completion_is_the_tool_call(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        one_span(
            {
                "llm.request.type": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": "Weather in Oslo?",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.finish_reason": "function_call",
                "gen_ai.completion.0.function_call.name": "get_weather",
                "gen_ai.completion.0.function_call.arguments": '{"city": "Oslo"}',
                "llm.request.functions.0.name": "get_weather",
                "llm.request.functions.0.description": "Weather of a city",
                "llm.request.functions.0.parameters": json.dumps(WEATHER_SCHEMA),
                "llm.usage.prompt_tokens": 40,
                "llm.usage.completion_tokens": 9,
            }
        ),
    )
    (call,) = calls(path)
    assert call.dialect == "openllmetry"
    answer = call.response.message
    assert [(c.name, c.arguments) for c in answer.tool_calls] == [("get_weather", {"city": "Oslo"})]
    assert call.response.finish_reason == "tool_calls"
    assert [(t.name, t.parameters) for t in call.request.tools] == [("get_weather", WEATHER_SCHEMA)]
    assert (call.response.usage.input_tokens, call.response.usage.output_tokens) == (40, 9)


def test_two_output_messages_are_one_answer_with_both_calls(tmp_path: Path) -> None:
    outputs = [
        {"role": "assistant", "parts": [genai_call("a", "f", {})]},
        {"role": "assistant", "parts": [genai_call("b", "g", {})]},
    ]
    user = [{"role": "user", "parts": [{"type": "text", "content": "go"}]}]
    path = write(
        tmp_path,
        one_span(
            {
                "gen_ai.input.messages": json.dumps(user),
                "gen_ai.output.messages": json.dumps(outputs),
            }
        ),
    )
    (call,) = calls(path)  # a message span without gen_ai.operation.name is a model call
    assert [c.id for c in call.response.message.tool_calls] == ["a", "b"]


def test_tool_call_response_result_is_the_tool_message_content(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "parts": [{"type": "text", "content": "weather?"}]},
        {"role": "assistant", "parts": [genai_call("c1", "w", {"city": "Oslo"})]},
        {"role": "user", "parts": [{"type": "tool_call_response", "id": "c1", "result": "cold"}]},
    ]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "Cold."}]}]
    path = write(
        tmp_path,
        one_span(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps(messages),
                "gen_ai.output.messages": json.dumps(answer),
                "gen_ai.usage.cache_read.input_tokens": 12,
                "gen_ai.usage.reasoning.output_tokens": 5,
            }
        ),
    )
    (call,) = calls(path)
    tool = call.request.messages[-1]
    assert (tool.role, tool.tool_call_id, tool.content) == ("tool", "c1", "cold")
    usage = call.response.usage
    assert (usage.cached_input_tokens, usage.reasoning_tokens) == (12, 5)


def test_openinference_output_value_is_read_beside_input_messages(tmp_path: Path) -> None:
    call_ = {"id": "x", "type": "function", "function": {"name": "w", "arguments": "{}"}}
    completion = {
        "choices": [
            {
                "message": {"role": "assistant", "content": None, "tool_calls": [call_]},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {
            "prompt_tokens": 10,
            "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": 4},
        },
    }
    path = write(
        tmp_path,
        one_span(
            {
                "openinference.span.kind": "LLM",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "hi",
                "output.mime_type": "application/json",
                "output.value": json.dumps(completion),
            }
        ),
    )
    (call,) = calls(path)
    assert call.response.message.tool_calls[0].id == "x"
    assert call.response.usage.cached_input_tokens == 4


def test_vercel_ai_model_call_span_and_its_turn_span(tmp_path: Path) -> None:
    sdk_ids = {"toolCallId": "t1", "toolName": "w"}
    sdk_output = {"type": "json", "value": {"c": 20}}
    prompt = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather in Rome?"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool-call", **sdk_ids, "input": {"city": "Rome"}}],
        },
        {"role": "tool", "content": [{"type": "tool-result", **sdk_ids, "output": sdk_output}]},
    ]
    tool = {"type": "function", "name": "w", "inputSchema": WEATHER_SCHEMA}
    outer = span(
        TRACE,
        "aaaaaaaaaaaaaaaa",
        "ai.generateText",
        {"ai.operationId": "ai.generateText", "ai.model.id": "gpt-4o", "ai.usage.inputTokens": 99},
    )
    inner = span(
        TRACE,
        "bbbbbbbbbbbbbbbb",
        "ai.generateText.doGenerate",
        {
            "ai.operationId": "ai.generateText.doGenerate",
            "ai.model.id": "gpt-4o",
            "ai.prompt.messages": json.dumps(prompt),
            "ai.prompt.tools": [json.dumps(tool)],
            "ai.prompt.toolChoice": json.dumps({"type": "auto"}),
            "ai.response.text": "20 degrees.",
            "ai.response.finishReason": "stop",
            "ai.settings.maxOutputTokens": 100,
            "ai.usage.inputTokens": 50,
            "ai.usage.outputTokens": 4,
        },
        parent="aaaaaaaaaaaaaaaa",
        start_ms=1,
    )
    path = write(tmp_path, outer, inner)
    (call,) = calls(path)
    assert call.dialect == "vercel_ai"
    assert [m.role for m in call.request.messages] == ["system", "user", "assistant", "tool"]
    assert call.request.messages[-1].tool_call_id == "t1"
    assert call.request.messages[-1].content == '{"c":20}'
    assert call.request.tools[0].parameters == WEATHER_SCHEMA
    assert call.request.tool_choice == "auto"
    assert call.request.params == {"max_tokens": 100}
    assert call.response.message.text() == "20 degrees."
    assert call.response.usage.input_tokens == 50


def test_gemini_contents_get_matching_call_ids(tmp_path: Path) -> None:
    declaration = {"name": "hello", "parametersJsonSchema": WEATHER_SCHEMA}
    request = {
        "model": "gemini-2.0-flash",
        "config": {
            "system_instruction": "Greet.",
            "tools": [{"function_declarations": [declaration]}],
            "stop_sequences": ["END"],
        },
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "hello", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "hello", "response": {}}}]},
        ],
    }
    response = {
        "content": {"role": "model", "parts": [{"text": "Hello!"}]},
        "finish_reason": "STOP",
    }
    path = write(
        tmp_path,
        one_span(
            {
                "gcp.vertex.agent.llm_request": json.dumps(request),
                "gcp.vertex.agent.llm_response": json.dumps(response),
            },
            name="call_llm",
        ),
    )
    (call,) = calls(path)
    assert [m.role for m in call.request.messages] == ["system", "user", "assistant", "tool"]
    assistant, tool = call.request.messages[2], call.request.messages[3]
    assert assistant.tool_calls[0].id == tool.tool_call_id == "call_1"
    assert call.request.tools[0].parameters == WEATHER_SCHEMA
    payload, adjustments = chat_payload(call.request, "m", None)
    assert payload["stop"] == ["END"] and "stop_sequences" not in payload
    assert adjustments == []  # read under the OpenAI name already
    assert call.response.finish_reason == "stop"


def test_langchain_messages_with_a_tool_named_role(tmp_path: Path) -> None:
    human = ["langchain", "schema", "messages", "HumanMessage"]
    tool_call = {
        "id": "k1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": "{}"},
    }
    messages = [
        {"lc": 1, "type": "constructor", "id": human, "kwargs": {"content": "weather?"}},
        {"role": "assistant", "content": "", "additional_kwargs": {"tool_calls": [tool_call]}},
        {"role": "get_weather", "content": "sunny", "additional_kwargs": {}},
    ]  # fmt: skip
    path = write(
        tmp_path,
        one_span(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps(messages),
                "gen_ai.output.messages": json.dumps([{"type": "ai", "content": "Sunny."}]),
            }
        ),
    )
    (call,) = calls(path)
    roles = [(m.role, m.tool_call_id) for m in call.request.messages]
    assert roles == [("user", None), ("assistant", None), ("tool", "k1")]
    assert call.response.message.text() == "Sunny."


def test_a_tool_result_without_its_call_and_an_empty_answer_are_named(tmp_path: Path) -> None:
    def chat(span_id: str, start: int, inputs: list[Any], outputs: list[Any] | None) -> Any:
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(inputs)}
        if outputs is not None:
            attributes["gen_ai.output.messages"] = json.dumps(outputs)
        return span(TRACE, span_id, "chat", attributes, start_ms=start)

    user, ok = {"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}
    path = write(
        tmp_path,
        chat("a" * 16, 0, [user, {"role": "tool", "content": "42"}], [ok]),
        chat("b" * 16, 10, [user], [{"role": "assistant", "content": ""}]),
        chat("c" * 16, 20, [{"role": "narrator", "content": "hi"}], None),
        chat("d" * 16, 30, [], [ok]),
    )
    source = source_of(path)
    assert list(source) == []
    assert dict(source.skipped_steps()) == {
        "tool_result_without_call": 1,
        "empty_answer": 1,
        "no_input_messages": 1,
    }
    assert dict(source.skipped_records()) == {"unknown_role:narrator": 1}


def test_responses_items_and_encrypted_reasoning(tmp_path: Path) -> None:
    items = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "2+2?"}]},
        {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAAB", "summary": []},
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_9",
            "name": "add",
            "arguments": "{}",
        },
        {"type": "function_call_output", "call_id": "call_9", "output": "4"},
    ]
    path = write(
        tmp_path,
        one_span(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps(items),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": "4"}]),
            }
        ),
    )
    (call,) = calls(path)
    kinds = [(m.role, m.tool_call_id) for m in call.request.messages]
    assert kinds == [("user", None), ("assistant", None), ("assistant", None), ("tool", "call_9")]
    reasoning = call.request.messages[1].content[0]
    assert reasoning.type == "reasoning"
    assert reasoning.model_extra == {"encrypted_content": "gAAAAB", "id": "rs_1"}
    assert call.request.messages[2].tool_calls[0].id == "call_9"
    payload, adjustments = chat_payload(call.request, "m", None)
    assert [m["role"] for m in payload["messages"]] == ["user", "assistant", "tool"]
    assert adjustments == [
        "left out encrypted reasoning (role assistant)",
        "left out a message with nothing the API takes (role assistant)",
    ]
    source = source_of(path)
    assert len(list(source)) == 1
    assert source.summaries[0].llm_steps_unsent_parts == 1


def test_a_call_without_captured_content_is_counted_not_silent(tmp_path: Path) -> None:
    attributes = {"gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 30}
    path = write(tmp_path, one_span(attributes, name="openai.chat"))
    source = source_of(path)
    assert list(source) == []
    assert dict(source.skipped_steps()) == {"no_input_messages": 1}


def test_a_responses_object_as_invocation_parameters_keeps_only_request_settings(
    tmp_path: Path,
) -> None:
    recorded = {
        "id": "resp_0f00",
        "created_at": 1759223041.0,
        "instructions": "You are a helpful agent.",
        "temperature": 1.0,
        "billing": {"payer": "developer"},
        "truncation": "disabled",
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "reasoning": {"effort": None},
    }
    path = write(
        tmp_path,
        one_span(
            {
                "openinference.span.kind": "LLM",
                "llm.invocation_parameters": json.dumps(recorded),
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "hi",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": "hello",
            }
        ),
    )
    (call,) = calls(path)
    assert call.request.params == {"temperature": 1.0}
    assert [(m.role, m.text()) for m in call.request.messages] == [
        ("system", "You are a helpful agent."),
        ("user", "hi"),
    ]


def test_a_span_export_with_its_own_input_and_output_attributes(tmp_path: Path) -> None:
    request = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "2+2?"},
        ]
    }
    path = write(
        tmp_path,
        one_span(
            {
                "braintrust.span_attributes": json.dumps({"type": "llm"}),
                "braintrust.input_json": json.dumps(request),
                "braintrust.output_json": json.dumps([{"role": "assistant", "content": "4"}]),
                "braintrust.metadata": json.dumps({"model": "gpt-4o-mini", "temperature": 0}),
                "braintrust.metrics": json.dumps({"prompt_tokens": 12, "completion_tokens": 1}),
            },
            name="Chat Completion",
        ),
    )  # fmt: skip
    (call,) = calls(path)
    assert call.dialect == "braintrust"
    assert call.request.model == "gpt-4o-mini"
    assert call.request.params == {"temperature": 0}
    assert [m.role for m in call.request.messages] == ["system", "user"]
    assert call.response.message.text() == "4"
    assert (call.response.usage.input_tokens, call.response.usage.output_tokens) == (12, 1)
