"""The request and answer a source keeps beside the attributes (a Langfuse observation's
``input`` and ``output``), read when no attribute dialect recognises the span.

The input may be a message list in any known shape, a request body (``{messages}``, a Gemini
``{contents}``, a Responses ``{input, instructions}``) or a single message. An input that is one
flat string (``"system: …\\nuser: …"``, as some handlers render a conversation) cannot be split
back into messages without guessing, so the call is marked ``input_is_flat_string``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_backtest.formats import genai_current, google_genai
from agent_backtest.formats.messages import decoded, read_answer, read_message, read_messages
from agent_backtest.trace import LLMCall, Message, Unusable
from agent_backtest.trace.openai_wire import tools_from_openai

if TYPE_CHECKING:
    from agent_backtest.formats.span_model import Span

NAME = "payload"


def content_keys(attributes: dict[str, Any]) -> set[str]:
    """No attribute is consumed: the payloads live beside the attributes."""
    return set()


def has_payload(span: Span) -> bool:
    """True when the source kept an input or output beside the attributes."""
    return span.input is not None or span.output is not None


def llm_call(span: Span) -> LLMCall | None:
    """The call read from the span's input and output payloads; None when it has neither."""
    if not has_payload(span):
        return None
    call = genai_current.metadata_only_call(span.attributes)
    value = decoded(span.input)
    if isinstance(value, str):
        call.unusable = Unusable(
            reason="input_is_flat_string",
            detail="the input is one flat string, not a list of messages: " + _preview(value),
        )
    elif value is not None:
        call.unusable = _read_input(call, value)
    alternatives = (call.request.params.get("n") or 1) > 1
    answer = read_answer(span.output, alternatives)
    if answer is not None:
        response = genai_current.response(span.attributes, answer.message, answer.finish_reason)
        response.usage = response.usage or answer.usage
        response.model = response.model or answer.model
        response.id = response.id or answer.response_id
        call.response = response
        call.notes.extend(answer.notes)
    return call


def _read_input(call: LLMCall, value: Any) -> Unusable | None:
    """Fill the request from an input payload in any known shape; what blocks it, if any."""
    if google_genai.is_request(value):
        request = google_genai.request_from_gemini(value)
        call.request.messages = request.messages
        call.request.tools = call.request.tools if request.tools is None else request.tools
        call.request.params = {**request.params, **call.request.params}
        call.request.model = call.request.model or request.model
        return None
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        call.request.messages = read_messages(value["messages"], "input.messages")
        if value.get("tools") is not None and call.request.tools is None:
            call.request.tools = tools_from_openai(value["tools"])
        return None
    if isinstance(value, dict) and ("input" in value or "instructions" in value):
        call.request.messages = _responses_input(value)
        return None
    if isinstance(value, dict) and isinstance(value.get("role"), str):
        call.request.messages = read_message(value)
        return None
    if isinstance(value, list):
        call.request.messages = read_messages(value, "input")
        return None
    return Unusable(
        reason="no_input_messages",
        detail=f"the input is not a list of messages: {_preview(str(value))}",
    )


def _responses_input(value: dict[str, Any]) -> list[Message]:
    """A Responses-style ``{instructions, input}`` as messages."""
    messages: list[Message] = []
    instructions = value.get("instructions")
    if isinstance(instructions, str) and instructions:
        messages.append(Message(role="system", content=instructions))
    items = value.get("input")
    if isinstance(items, str):
        messages.append(Message(role="user", content=items))
    elif items is not None:
        messages.extend(read_messages(items, "input"))
    return messages


def _preview(text: str, limit: int = 60) -> str:
    """The start of a text, on one line."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")
