"""Anthropic Messages API bodies (``POST /v1/messages``) as canonical requests and answers.

A request holds ``system`` (a string or text blocks) beside ``messages`` whose content is a
string or blocks (``text``, ``tool_use``, ``tool_result``, ``thinking``), ``tools`` with an
``input_schema`` and a typed ``tool_choice``. The answer is one assistant message of blocks with a
``stop_reason``. Blocks are read by the same message reader the span dialects use, so a call gives
the same unit whether it was recorded as HTTP or as a span.
"""

from __future__ import annotations

from typing import Any

from agent_backtest.errors import RecordError
from agent_backtest.formats.messages import (
    body_request,
    finish_reason_name,
    read_answer,
    read_messages,
)
from agent_backtest.trace import LLMRequest, LLMResponse, Message, Usage
from agent_backtest.trace.openai_wire import first_count

REQUEST_KEYS = ("model", "system", "messages", "tools", "tool_choice")
# Anthropic's tool_choice types under the chat-completions names the canonical request uses.
TOOL_CHOICES = {"auto": "auto", "any": "required", "none": "none"}

CLIENT_TOOL_TYPES: frozenset[str | None] = frozenset({None, "custom"})
"""The ``type`` of a tool the caller runs (any other is hosted by the API)."""


def request_from_messages(payload: Any) -> tuple[LLMRequest, list[str]]:
    """A Messages request body as a canonical request, with notes on what was set aside."""
    if not isinstance(payload, dict) or not isinstance(payload.get("messages"), list):
        raise RecordError("malformed_request", "a Messages request needs a messages list")
    return body_request(
        payload,
        _system(payload.get("system")) + read_messages(payload["messages"], "messages"),
        _tool_choice(payload.get("tool_choice")),
        request_keys=REQUEST_KEYS,
        client_tool_types=CLIENT_TOOL_TYPES,
        hosted_kind="server",
    )


def response_from_messages(body: Any) -> LLMResponse:
    """A Messages response body as a canonical answer."""
    if not isinstance(body, dict) or body.get("type") == "error":
        raise RecordError("error_response", "the body is an error, not a message")
    if not isinstance(body.get("content"), list):
        raise RecordError("no_response", "the message has no content list")
    answer = read_answer({"role": "assistant", "content": body["content"]})
    if answer is None:
        raise RecordError("no_response", "the message content is empty")
    model, message_id = body.get("model"), body.get("id")
    return LLMResponse(
        message=answer.message,
        finish_reason=finish_reason_name(body.get("stop_reason")),
        usage=_usage(body.get("usage")),
        model=model if isinstance(model, str) else None,
        id=message_id if isinstance(message_id, str) else None,
    )


def _system(raw: Any) -> list[Message]:
    """The top-level ``system`` as a leading system message."""
    if raw is None or raw == "" or raw == []:
        return []
    if isinstance(raw, str):
        return [Message(role="system", content=raw)]
    if isinstance(raw, list):
        texts = [block.get("text") for block in raw if isinstance(block, dict)]
        if all(isinstance(text, str) for text in texts):
            return [Message(role="system", content="\n\n".join(texts))]
    raise RecordError("malformed_request", "system must be a string or a list of text blocks")


def _tool_choice(raw: Any) -> Any:
    """A typed ``tool_choice`` under the chat-completions names."""
    if not isinstance(raw, dict):
        return raw
    kind = raw.get("type")
    if kind == "tool" and isinstance(raw.get("name"), str):
        return {"type": "function", "function": {"name": raw["name"]}}
    return TOOL_CHOICES.get(kind, raw)


def _usage(raw: Any) -> Usage | None:
    """Messages usage as reported (as the Anthropic provider reads it); cache reads kept apart."""
    if not isinstance(raw, dict):
        return None
    found = Usage(
        input_tokens=first_count(raw, "input_tokens"),
        output_tokens=first_count(raw, "output_tokens"),
        cached_input_tokens=first_count(raw, "cache_read_input_tokens"),
    )
    return None if found == Usage() else found
