"""Request and answer bodies a span keeps whole, as JSON attributes, read as the exact call.

Logfire's OpenAI and Anthropic integrations put the request body as sent under ``request_data``
and the answer under ``response_data``: ``{message, usage}`` (the assistant message in the
chat-completions form, for Anthropic too), a full response body, or, for a streamed answer,
``{combined_chunk_content, chunk_count}``. The request is a chat-completions, Responses or
Anthropic Messages body, read as the cassette reader reads the same body, so ``tool_choice``,
stop sequences and every other parameter come through as sent. Being the exact bodies, this
reading beats any reconstruction from other attributes on the same span.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_backtest.formats import anthropic_messages, genai_current
from agent_backtest.formats.messages import decoded, openai_usage, read_answer
from agent_backtest.formats.openai_responses import is_responses_request, request_from_responses
from agent_backtest.formats.streams import STREAMED_NOTE
from agent_backtest.trace import LLMCall, LLMRequest, LLMResponse, Message
from agent_backtest.trace.openai_wire import request_from_openai

if TYPE_CHECKING:
    from agent_backtest.formats.span_model import Span

NAME = "raw_bodies"
REQUEST_KEY, RESPONSE_KEY = "request_data", "response_data"
# Blocks only an Anthropic Messages request holds.
ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})


def content_keys(attributes: dict[str, Any]) -> set[str]:
    """The attribute keys this dialect turns into the call (not kept twice in the step)."""
    return {key for key in (REQUEST_KEY, RESPONSE_KEY) if key in attributes}


def request_body(attributes: dict[str, Any]) -> dict[str, Any] | None:
    """The model request body a span keeps under ``request_data``; None when it keeps none, or
    a body that is no model request (an embedding, an image)."""
    body = decoded(attributes.get(REQUEST_KEY))
    if not isinstance(body, dict) or not ("messages" in body or is_responses_request(body)):
        return None
    return body


def llm_call(span: Span) -> LLMCall | None:
    """The call whose request and answer bodies the span keeps; None when it keeps none."""
    attributes = span.attributes
    body = request_body(attributes)
    if body is None:
        return None
    request, notes = _request(body, attributes)
    call = LLMCall(request=request, provider=genai_current.provider(attributes))
    call.notes.extend(notes)
    call.response = _response(decoded(attributes.get(RESPONSE_KEY)), call.notes)
    return call


def _request(body: dict[str, Any], attributes: dict[str, Any]) -> tuple[LLMRequest, list[str]]:
    """The request body under the API it belongs to."""
    if is_responses_request(body):
        parsed = request_from_responses(body)
        return parsed.request, parsed.notes
    if _is_anthropic(body, attributes):
        return anthropic_messages.request_from_messages(body)
    return request_from_openai(body), []


def _is_anthropic(body: dict[str, Any], attributes: dict[str, Any]) -> bool:
    """True for an Anthropic Messages body: a top-level ``system``, Anthropic-only content
    blocks, or a span that names Anthropic as its system."""
    if "system" in body or attributes.get("gen_ai.system") == "anthropic":
        return True
    return any(
        isinstance(block, dict) and block.get("type") in ANTHROPIC_BLOCKS
        for message in body["messages"]
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for block in message["content"]
    )


def _response(value: Any, notes: list[str]) -> LLMResponse | None:
    """The recorded answer; None when the span keeps none."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("combined_chunk_content"), str):
        notes.append(STREAMED_NOTE.format(count=value.get("chunk_count", "its")))
        return LLMResponse(
            message=Message(role="assistant", content=value["combined_chunk_content"] or None)
        )
    answer = read_answer(value)
    if answer is None:
        return None
    notes.extend(answer.notes)
    return LLMResponse(
        message=answer.message,
        finish_reason=answer.finish_reason,
        usage=answer.usage or openai_usage(value.get("usage")),
        model=answer.model,
        id=answer.response_id,
    )
