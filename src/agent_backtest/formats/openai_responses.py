"""OpenAI Responses API shapes to canonical records: input items, requests, responses.

A Responses request carries ``instructions`` (the system prompt) and ``input`` (a string or a
list of items: role messages with ``input_text``/``output_text`` parts, ``function_call`` and
``function_call_output``). Its answer is a list of ``output`` items. Both become the chat form
of the canonical model: instructions a system message, function calls tool calls of one
assistant message, function outputs tool messages. With ``previous_response_id`` the request
holds only the new input; rebuilding the history is the caller's job (see ``conversations``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_backtest.errors import RecordError
from agent_backtest.formats.messages import body_request
from agent_backtest.trace import LLMRequest, LLMResponse, Message, ToolCall
from agent_backtest.trace.openai_wire import (
    content_from_openai,
    message_from_openai,
    usage_from_openai,
)

REQUEST_KEYS = ("model", "input", "instructions", "tools", "tool_choice", "previous_response_id")
TEXT_PART_TYPES = ("input_text", "output_text", "text")
# Items that carry no chat message: encrypted reasoning is for the same model's next call only.
IGNORED_ITEM_TYPES = ("reasoning",)

CLIENT_TOOL_TYPES: frozenset[str | None] = frozenset({None, "function"})
"""The ``type`` of a tool the caller runs (any other is hosted by the API)."""


@dataclass
class ResponsesRequest:
    """A Responses request in canonical form, before any history is rebuilt."""

    request: LLMRequest
    instructions: int
    """How many leading messages come from ``instructions`` (0 or 1 and more for item lists)."""
    previous_response_id: str | None
    notes: list[str] = field(default_factory=list)


def is_responses_request(payload: Any) -> bool:
    """True for a Responses request body (``input``), false for chat completions (``messages``)."""
    return isinstance(payload, dict) and "input" in payload and "messages" not in payload


def request_from_responses(payload: Any) -> ResponsesRequest:
    """A Responses request body as a canonical request; other keys become params."""
    if not isinstance(payload, dict):
        raise RecordError("malformed_request", "request must be an object")
    if payload.get("input") is None:
        raise RecordError("malformed_request", "Responses request has no input")
    instructions = _instructions(payload.get("instructions"))
    request, notes = body_request(
        payload,
        instructions + messages_from_items(payload["input"]),
        _tool_choice(payload.get("tool_choice")),
        request_keys=REQUEST_KEYS,
        client_tool_types=CLIENT_TOOL_TYPES,
        hosted_kind="non-function",
    )
    previous = payload.get("previous_response_id")
    if previous is not None and not isinstance(previous, str):
        raise RecordError("malformed_request", "previous_response_id must be a string")
    return ResponsesRequest(request, len(instructions), previous, notes)


def _tool_choice(raw: Any) -> Any:
    """A forced function (``{"type": "function", "name": …}`` in the Responses API) in the
    chat-completions form the canonical request uses; other choices as they are."""
    if isinstance(raw, dict) and raw.get("type") == "function" and isinstance(raw.get("name"), str):
        return {"type": "function", "function": {"name": raw["name"]}}
    return raw


def messages_from_items(items: Any) -> list[Message]:
    """Responses input (a string or a list of items) as chat messages."""
    if isinstance(items, str):
        return [Message(role="user", content=items)]
    if not isinstance(items, list):
        raise RecordError("malformed_request", "input must be a string or a list of items")
    messages: list[Message] = []
    for item in items:
        if not isinstance(item, dict):
            raise RecordError("malformed_request", "input items must be objects")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            messages.append(
                message_from_openai(
                    {"role": item.get("role"), "content": _content(item.get("content"))}
                )
            )
        elif kind == "function_call":
            _append_call(messages, _function_call(item))
        elif kind == "function_call_output":
            messages.append(
                Message(
                    role="tool", content=_content(item.get("output")), tool_call_id=_call_id(item)
                )
            )
        elif kind == "item_reference":
            raise RecordError(
                "history_not_recorded", f"input refers to stored item {item.get('id')!r}"
            )
        elif kind not in IGNORED_ITEM_TYPES:
            raise RecordError("malformed_request", f"unsupported input item type {kind!r}")
    return messages


def response_from_responses(body: Any) -> LLMResponse:
    """A Responses response body (its ``output`` items) as one canonical assistant message."""
    if not isinstance(body, dict):
        raise RecordError("malformed_response", "response must be an object")
    output = body.get("output")
    if not isinstance(output, list):
        raise RecordError("no_response", "response has no output list")
    parts: list[Any] = []
    calls: list[ToolCall] = []
    for item in output:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "message":
            content = item.get("content")
            parts.extend(content if isinstance(content, list) else [content])
        elif kind == "function_call":
            calls.append(_function_call(item))
        elif kind not in IGNORED_ITEM_TYPES:
            raise RecordError("unsupported_output", f"output item of type {kind!r}")
    content = content_from_openai(_content(parts)) if parts else None
    if content is None and not calls:
        raise RecordError("no_response", "response output holds no message or function call")
    message = Message(role="assistant", content=content, tool_calls=calls or None)
    model, response_id = body.get("model"), body.get("id")
    return LLMResponse(
        message=message,
        finish_reason=_finish_reason(body),
        usage=usage_from_openai(body.get("usage")),
        model=model if isinstance(model, str) else None,
        id=response_id if isinstance(response_id, str) else None,
    )


def _instructions(raw: Any) -> list[Message]:
    """The ``instructions`` of a request as leading messages."""
    if raw is None or raw == "":  # an empty string is how some clients send no instructions
        return []
    if isinstance(raw, str):
        return [Message(role="system", content=raw)]
    if isinstance(raw, list):  # instructions given as input items (reusable prompts)
        return messages_from_items(raw)
    raise RecordError("malformed_request", "instructions must be a string or a list of items")


def _content(raw: Any) -> Any:
    """Responses content parts in chat form: text parts as ``text``, one text part as a string."""
    if not isinstance(raw, list):
        return raw
    parts = []
    for part in raw:
        if isinstance(part, dict) and part.get("type") in TEXT_PART_TYPES:
            parts.append({"type": "text", "text": part.get("text")})
        else:
            parts.append(part)
    if len(parts) == 1 and isinstance(parts[0], dict) and parts[0].get("type") == "text":
        return parts[0]["text"]
    return parts


def _function_call(item: dict[str, Any]) -> ToolCall:
    """A ``function_call`` item as a tool call."""
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise RecordError("malformed_tool_call", "function_call without a name")
    return ToolCall.from_raw(name, item.get("arguments"), _call_id(item))


def _call_id(item: dict[str, Any]) -> str | None:
    """The ``call_id`` of a function call or output item."""
    # call_id pairs a call with its output; the item's own id (fc_…) does not.
    call_id = item.get("call_id")
    if call_id is not None and not isinstance(call_id, str):
        raise RecordError("malformed_tool_call", "call_id must be a string")
    return call_id


def _append_call(messages: list[Message], call: ToolCall) -> None:
    """Consecutive function calls (and the text before them) form one assistant message."""
    last = messages[-1] if messages else None
    if last is not None and last.role == "assistant":
        last.tool_calls = [*(last.tool_calls or []), call]
    else:
        messages.append(Message(role="assistant", tool_calls=[call]))


def _finish_reason(body: dict[str, Any]) -> str | None:
    """Why an incomplete answer stopped; None for a complete one."""
    # Responses has no finish reason; an incomplete answer says why it stopped, and a complete
    # one is left unrecorded rather than guessed.
    details = body.get("incomplete_details")
    if body.get("status") == "incomplete" and isinstance(details, dict):
        reason = details.get("reason")
        return reason if isinstance(reason, str) else None
    return None
