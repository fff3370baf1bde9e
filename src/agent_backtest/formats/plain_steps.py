"""The calls of GenAI spans of the common shape read as plain values, the way the step's JSON
holds them, without a model per message.

Most chat spans an agent exports say everything in the current GenAI attributes: messages of
text and tool-call parts, tool results that name their calls, instructions as text, the tools
as one JSON text shared by every call, an answer of one message. :func:`genai_call` reads such
a span's call as the dict the canonical JSON writes (fields that are None left out), so its
step is validated once from plain values instead of being built model by model. Any other span
gives None, and the general readers (:mod:`~agent_backtest.formats.dialects`) read it: the
shapes taken here are the ones whose reading is known to be the same either way, and a value
of an unexpected type anywhere sends the span back to them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import orjson

from agent_backtest.errors import RecordError
from agent_backtest.formats import genai_current, vercel_ai
from agent_backtest.formats.messages import (
    PLAIN_KEYS,
    PLAIN_ROLES,
    RESULT_TYPES,
    _call,
    _first_str,
    _result,
    decoded,
    finish_reason_name,
    texts_and_calls,
)
from agent_backtest.formats.span_model import Span
from agent_backtest.redaction import is_secret
from agent_backtest.trace import dump_record, parse_arguments

# Attributes a GenAI span may hold and still be read here: the ones only the current GenAI
# dialect reads (no other dialect recognises a span by them), and a few no dialect reads.
GENAI_KEYS = frozenset(
    {
        "gen_ai.operation.name",
        "gen_ai.provider.name",
        "gen_ai.system",
        "gen_ai.request.model",
        "gen_ai.response.model",
        "gen_ai.response.id",
        "gen_ai.response.finish_reasons",
        "gen_ai.system_instructions",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.definitions",
        "gen_ai.agent.name",
        "gen_ai.agent.id",
        "gen_ai.agent.version",
        "server.address",
        "server.port",
        "session.id",
        *(key for key in genai_current.REQUEST_PARAMS if key.startswith("gen_ai.request.")),
        *(
            key
            for names in genai_current.USAGE_KEYS.values()
            for key in names
            if key.startswith("gen_ai.usage.")
        ),
    }
)


# The keys of a GenAI tool message read here: its results are its parts.
TOOL_KEYS = frozenset({"role", "parts"})


class _Other(Exception):
    """The span's call has a shape this module leaves to the general readers."""


def genai_call(span: Span) -> dict[str, Any] | None:
    """The call of a GenAI chat span of the common shape as the plain values of its JSON, or
    None when the span is of another shape (the general readers take it then).

    A call taken here is one the general readers would read the same and find nothing
    blocking: it has input messages with a system message, and an answer.
    """
    attributes = span.attributes
    if (
        span.events
        or span.fallback is not None
        or span.input is not None
        or span.output is not None
        or span.consumed
        or not GENAI_KEYS.issuperset(attributes)
        or not genai_current.claims(attributes)
    ):
        return None
    try:
        return _call_fields(attributes)
    except (_Other, RecordError):
        return None  # the general readers read it, and name what is wrong with it


def _call_fields(attributes: dict[str, Any]) -> dict[str, Any]:
    """The call's fields; :class:`_Other` when the span is not of the common shape."""
    params = genai_current.request_params(attributes)
    if (params.get("n") or 1) > 1 or any(is_secret(key, value) for key, value in params.items()):
        raise _Other  # alternatives, or a parameter the reading options would drop
    messages = _input_messages(attributes.get("gen_ai.input.messages"))
    instructions = genai_current.system_instructions(attributes.get("gen_ai.system_instructions"))
    if instructions is not None and not any(m["role"] == "system" for m in messages):
        if not isinstance(instructions, str):
            raise _Other
        messages.insert(0, {"role": "system", "content": instructions})
    if not any(m["role"] == "system" for m in messages):
        raise _Other  # instructions may be on the agent span, or there is no input at all
    message, finish_reason = _answer(attributes.get("gen_ai.output.messages"))
    if not _text(message).strip() and "tool_calls" not in message:
        raise _Other  # an empty answer: the general reader names it
    request: dict[str, Any] = {}
    _put(
        request,
        "model",
        genai_current.optional_str(attributes.get("gen_ai.request.model"), "model"),
    )
    request["messages"] = messages
    _put(request, "tools", _tools(attributes.get("gen_ai.tool.definitions")))
    request["params"] = params
    response = genai_current.response_fields(attributes, message, finish_reason)
    call = {"request": request, "response": {k: v for k, v in response.items() if v is not None}}
    _put(call, "provider", genai_current.provider(attributes))
    call.update(
        reconstructed=False, tools_supplied=False, notes=[], dialect="genai", filled_from={}
    )
    return call


def _put(fields: dict[str, Any], name: str, value: Any) -> None:
    """Set a field unless its value is None (the canonical JSON leaves those out)."""
    if value is not None:
        fields[name] = value


def _input_messages(value: Any) -> list[dict[str, Any]]:
    """``gen_ai.input.messages`` as plain messages, as :func:`genai_current.messages_from_genai`
    reads them."""
    value = genai_current.load_json_value(value)
    if value is None:
        return []
    if type(value) is not list:
        raise _Other
    messages = []
    for raw in value:
        if type(raw) is dict and raw.get("role") == "tool":
            messages.extend(_tool_results(raw))
        else:
            messages.append(_message(raw))
    return messages


def _tool_results(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """A GenAI tool message (``{role: tool, parts: [tool_call_response, …]}``) as one plain
    tool message per result, as :func:`~agent_backtest.formats.messages.read_message` reads
    it; each must name the call it answers (else the call is matched to it later) and hold
    text."""
    parts = raw.get("parts")
    if not TOOL_KEYS.issuperset(raw) or type(parts) is not list or not parts:
        raise _Other
    results = []
    for item in parts:
        if type(item) is not dict or item.get("type") not in RESULT_TYPES:
            raise _Other
        message = _fields(_result(item))
        if "tool_call_id" not in message or type(message.get("content", "")) is not str:
            raise _Other
        results.append(message)
    return results


def _message(raw: Any) -> dict[str, Any]:
    """A system, user or assistant message whose content is text, or text and tool-call
    parts, as :func:`~agent_backtest.formats.messages.read_message` reads it."""
    if type(raw) is not dict:
        raise _Other
    role = raw.get("role")
    if type(role) is not str or role not in PLAIN_ROLES or not PLAIN_KEYS.issuperset(raw):
        raise _Other
    value = raw.get("parts", raw.get("content"))
    message: dict[str, Any] = {"role": role}
    if value is None or type(value) is str:
        _put(message, "content", value)
        return message
    if type(value) is not list:
        raise _Other
    parts = texts_and_calls(value, _tool_call)
    if parts is None:
        raise _Other
    texts, calls = parts
    if len(texts) == 1:
        message["content"] = texts[0]
    elif texts:
        message["content"] = [{"type": "text", "text": text} for text in texts]
    if calls:
        message["tool_calls"] = calls
    return message


def _tool_call(item: dict[str, Any]) -> dict[str, Any]:
    """A GenAI tool-call part (``{type, id, name, arguments}``) as a plain tool call, as
    :func:`~agent_backtest.formats.messages._call` reads it (which reads the other shapes)."""
    name = item.get("name")
    if "function" in item or item.get("type") == "function_call" or type(name) is not str:
        return _fields(_call(item))
    if not name:
        return _fields(_call(item))
    arguments = next((item[key] for key in ("arguments", "args", "input") if key in item), None)
    value, raw, error = parse_arguments(arguments)
    call: dict[str, Any] = {}
    _put(call, "id", _first_str(item, "id", "call_id", "toolCallId", "tool_call_id"))
    call["name"] = name
    _put(call, "arguments", value)
    _put(call, "arguments_raw", raw)
    _put(call, "arguments_error", error)
    return call


def _answer(value: Any) -> tuple[dict[str, Any], str | None]:
    """``gen_ai.output.messages`` holding one assistant message, as the message and its
    finish reason, as :func:`~agent_backtest.formats.messages.read_answer` reads it."""
    value = decoded(value)
    if type(value) is not list or len(value) != 1:
        raise _Other  # no answer, several messages to merge, or another shape
    item = value[0]
    if (
        type(item) is not dict
        or "toolCallId" in item
        or "type" in item
        or item.get("role") != "assistant"
    ):
        raise _Other
    return _message(item), finish_reason_name(item.get("finish_reason"))


def _text(message: dict[str, Any]) -> str:
    """A plain message's text, as :meth:`~agent_backtest.trace.Message.text` gives it."""
    content = message.get("content")
    if content is None:
        return ""
    if type(content) is str:
        return content
    return "\n".join(part["text"] for part in content)


def _tools(value: Any) -> list[dict[str, Any]] | None:
    """``gen_ai.tool.definitions`` recorded as JSON text, as plain tool definitions; None when
    not recorded or recorded as none (another dialect has no tools of its own here)."""
    if value is None:
        return None
    if type(value) is not str:
        raise _Other
    found = _tools_of_text(value)
    return list(found) if found else None


@lru_cache(maxsize=64)
def _tools_of_text(text: str) -> tuple[dict[str, Any], ...]:
    """The tool definitions of one JSON text as their JSON values, read once per distinct text
    (an agent sends the same tools with every call; the values are never changed in place)."""
    found = genai_current.tool_definitions(text) or []
    return tuple(orjson.loads(dump_record(tool)) for tool in found)


def genai_tool(span: Span, error: str | None) -> dict[str, Any] | None:
    """The execution of a GenAI ``execute_tool`` span as the plain values of its JSON, as
    :func:`~agent_backtest.formats.dialects.read_tool` reads it, with the span's ``error``;
    None for a span another dialect reads, or one with a mistyped call id."""
    attributes = span.attributes
    if vercel_ai.operation(attributes) == "ai.toolCall":
        return None
    if attributes.get("gen_ai.operation.name") != "execute_tool" and (
        "gen_ai.tool.name" not in attributes
    ):
        return None
    call_id = attributes.get("gen_ai.tool.call.id")
    if call_id is not None and type(call_id) is not str:
        return None
    name = attributes.get("gen_ai.tool.name")
    if type(name) is not str or not name:
        name = span.name.removeprefix("execute_tool").strip() or span.name
    value, raw, parse_error = parse_arguments(attributes.get("gen_ai.tool.call.arguments"))
    tool = {"name": name}
    _put(tool, "call_id", call_id)
    _put(tool, "arguments", value)
    _put(tool, "arguments_raw", raw)
    _put(tool, "arguments_error", parse_error)
    _put(tool, "result", attributes.get("gen_ai.tool.call.result"))
    _put(tool, "error", error)
    return tool


def _fields(record: Any) -> dict[str, Any]:
    """A flat record's fields that are not None, in field order (a tool call or execution)."""
    return {key: value for key, value in record.__dict__.items() if value is not None}
