"""What goes on the /chat/completions wire: only what the API knows, every change listed."""

from __future__ import annotations

from agent_backtest.trace import ContentPart, LLMRequest, Message, ToolCall
from agent_backtest.trace.openai_wire import chat_payload


def test_unknown_parameters_stay_in_the_unit_and_are_listed() -> None:
    request = LLMRequest(
        messages=[Message(role="user", content="hi")],
        params={"temperature": 0.2, "created_at": 1759, "billing": {"payer": "x"}},
    )
    payload, adjustments = chat_payload(request, "gpt-4o", None)
    assert payload == {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.2,
    }
    assert adjustments == [
        "left out parameter created_at: not a chat-completions parameter",
        "left out parameter billing: not a chat-completions parameter",
    ]
    assert request.params["billing"] == {"payer": "x"}


def test_other_apis_names_are_sent_under_the_chat_completions_name() -> None:
    request = LLMRequest(
        messages=[Message(role="user", content="hi")],
        params={"stop_sequences": ["END"], "max_output_tokens": 64},
    )
    payload, adjustments = chat_payload(request, "m", None)
    assert payload["stop"] == ["END"] and payload["max_tokens"] == 64
    assert "stop_sequences" not in payload
    assert adjustments == [
        "sent parameter stop_sequences as stop",
        "sent parameter max_output_tokens as max_tokens",
    ]


def test_reasoning_parts_are_left_out_of_the_replayed_history() -> None:
    thinking = ContentPart(type="reasoning", text=None, encrypted_content="gAAAA")
    request = LLMRequest(
        messages=[
            Message(role="user", content="weather?"),
            Message(
                role="assistant",
                content=[thinking, ContentPart(type="text", text="Checking.")],
                tool_calls=[ToolCall(id="c1", name="weather", arguments={})],
            ),
            Message(role="tool", content="sunny", tool_call_id="c1", name="weather"),
        ]
    )
    payload, adjustments = chat_payload(request, "m", None)
    assistant, tool = payload["messages"][1], payload["messages"][2]
    assert assistant["content"] == "Checking."
    assert tool == {"role": "tool", "content": "sunny", "tool_call_id": "c1"}
    assert adjustments == ["left out encrypted reasoning (role assistant)"]
    assert request.messages[1].content[0] is thinking
