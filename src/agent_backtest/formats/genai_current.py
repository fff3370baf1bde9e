"""The OpenTelemetry GenAI semantic conventions (1.37 and later) as canonical LLM calls.

Since 1.37 a GenAI span carries the conversation as attributes: ``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.system_instructions`` and ``gen_ai.tool.definitions``,
each a JSON string or an already structured value, with messages made of typed ``parts``.
The request, usage and response attributes (``gen_ai.request.*``, ``gen_ai.usage.*``,
``gen_ai.response.*``) are older and shared with the event form, so the helpers reading them
live here and :mod:`genai_events` reuses them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from agent_backtest.errors import RecordError
from agent_backtest.trace import (
    ContentPart,
    LLMCall,
    LLMRequest,
    LLMResponse,
    Message,
    ToolCall,
    ToolExecution,
    Usage,
    parse_arguments,
)
from agent_backtest.trace.openai_wire import ROLES, message_from_openai, tools_from_openai

if TYPE_CHECKING:
    from agent_backtest.formats.spans import Span

# Attributes whose content becomes the call or execution itself (not kept twice in the step).
CONTENT_KEYS = frozenset(
    {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.definitions",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    }
)

# The GenAI schema names a few finish reasons differently from OpenAI, whose names the
# canonical model uses.
FINISH_REASONS = {"tool_call": "tool_calls"}


def content_keys(attributes: dict[str, Any]) -> set[str]:
    """The attribute keys this dialect turns into the call (not kept twice in the step)."""
    return {key for key in CONTENT_KEYS if key in attributes}


def llm_call(span: Span) -> LLMCall | None:
    """The call a span records in the current attribute form, or None if it uses another."""
    attributes = span.attributes
    if "gen_ai.input.messages" not in attributes and "gen_ai.output.messages" not in attributes:
        return None
    call = metadata_only_call(attributes)
    messages = messages_from_genai(attributes.get("gen_ai.input.messages"), "gen_ai.input.messages")
    instructions = system_instructions(attributes.get("gen_ai.system_instructions"))
    if instructions is not None and not any(m.role == "system" for m in messages):
        messages.insert(0, Message(role="system", content=instructions))
    call.request.messages = messages
    output = _output(attributes.get("gen_ai.output.messages"))
    if output is not None:
        call.response = response(attributes, *output)
    return call


def tool_execution(span: Span) -> ToolExecution | None:
    """The tool execution of an ``execute_tool`` span, or None for any other span."""
    attributes = span.attributes
    if attributes.get("gen_ai.operation.name") != "execute_tool":
        return None
    name = attributes.get("gen_ai.tool.name")
    if not isinstance(name, str) or not name:
        name = span.name.removeprefix("execute_tool").strip() or span.name
    value, raw, error = parse_arguments(attributes.get("gen_ai.tool.call.arguments"))
    return ToolExecution(
        name=name,
        call_id=optional_str(attributes.get("gen_ai.tool.call.id"), "gen_ai.tool.call.id"),
        arguments=value,
        arguments_raw=raw,
        arguments_error=error,
        result=attributes.get("gen_ai.tool.call.result"),
    )


def metadata_only_call(attributes: dict[str, Any]) -> LLMCall:
    """A call with everything the span says except the messages (model, tools, params)."""
    return LLMCall(
        request=LLMRequest(
            model=optional_str(attributes.get("gen_ai.request.model"), "gen_ai.request.model"),
            messages=[],
            tools=tool_definitions(attributes.get("gen_ai.tool.definitions")),
            params=request_params(attributes),
        ),
        provider=provider(attributes),
    )


def response(
    attributes: dict[str, Any], message: Message, finish_reason: str | None
) -> LLMResponse:
    """The answer: the message, plus usage, model, id and finish reason from the attributes."""
    if finish_reason is None:
        reasons = load_json_value(attributes.get("gen_ai.response.finish_reasons"))
        if isinstance(reasons, str):
            reasons = [reasons]
        if isinstance(reasons, list) and reasons and isinstance(reasons[0], str):
            finish_reason = reasons[0]
    return LLMResponse(
        message=message,
        finish_reason=finish_reason_name(finish_reason),
        usage=usage(attributes),
        model=optional_str(attributes.get("gen_ai.response.model"), "gen_ai.response.model"),
        id=optional_str(attributes.get("gen_ai.response.id"), "gen_ai.response.id"),
    )


def system_instructions(value: Any) -> str | list[ContentPart] | None:
    """``gen_ai.system_instructions`` (a string, or a list of parts) as message content."""
    try:
        value = load_json_value(value)
    except RecordError:
        return value  # plain instructions that merely start with a bracket
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise RecordError("mistyped_field", "gen_ai.system_instructions must be text or parts")
    parts = [_content_part(part) for part in value]
    return _content(parts)


def messages_from_genai(value: Any, key: str) -> list[Message]:
    """A list of GenAI messages (``{role, parts}``; OpenAI-shaped ones are accepted too)."""
    value = load_json_value(value)
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError("mistyped_field", f"{key} must be a list of messages")
    messages: list[Message] = []
    for raw in value:
        messages.extend(message_from_genai(raw))
    return messages


def message_from_genai(raw: Any) -> list[Message]:
    """One GenAI message; a message answering several tool calls becomes one per call."""
    if not isinstance(raw, dict):
        raise RecordError("malformed_message", "a message must be an object")
    if not isinstance(raw.get("parts"), list):
        if "content" in raw or "tool_calls" in raw:
            return [openai_message(raw)]
        raise RecordError("malformed_message", "message has no parts list")
    role = raw.get("role")
    if role not in ROLES:
        raise RecordError("malformed_message", f"unknown message role {role!r}")
    parts: list[ContentPart] = []
    calls: list[ToolCall] = []
    answers: list[Message] = []
    for part in raw["parts"]:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "tool_call":
            calls.append(_tool_call(part))
        elif kind == "tool_call_response":
            answers.append(
                Message(
                    role="tool",
                    tool_call_id=optional_str(part.get("id"), "id"),
                    content=_as_text(part.get("response")),
                )
            )
        else:
            parts.append(_content_part(part))
    name = optional_str(raw.get("name"), "name")
    if answers and not parts:
        return answers
    message = Message(role=role, content=_content(parts), tool_calls=calls or None, name=name)
    return [*answers, message]


def openai_message(raw: Any) -> Message:
    """An OpenAI chat message found inside a span, its tool_calls checked to be a list."""
    if not isinstance(raw, dict):
        raise RecordError("malformed_message", "a message must be an object")
    calls = raw.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise RecordError("malformed_message", "tool_calls must be a list")
    return message_from_openai(raw)


def tool_definitions(value: Any) -> list[Any] | None:
    """``gen_ai.tool.definitions`` as tool definitions; None when not recorded."""
    value = load_json_value(value)
    if isinstance(value, dict):
        value = [value]
    return tools_from_openai(value)


def request_params(attributes: dict[str, Any]) -> dict[str, Any]:
    """``gen_ai.request.*`` sampling parameters under their OpenAI names."""
    params = {}
    for key, (name, convert) in REQUEST_PARAMS.items():
        if attributes.get(key) is not None:
            params[name] = convert(attributes[key], key)
    return params


def usage(attributes: dict[str, Any]) -> Usage | None:
    """Token counts from ``gen_ai.usage.*``; None when none is recorded."""
    found = Usage(
        input_tokens=to_int(
            attributes.get("gen_ai.usage.input_tokens"), "gen_ai.usage.input_tokens"
        ),
        output_tokens=to_int(
            attributes.get("gen_ai.usage.output_tokens"), "gen_ai.usage.output_tokens"
        ),
    )
    return None if found.input_tokens is None and found.output_tokens is None else found


def provider(attributes: dict[str, Any]) -> str | None:
    """``gen_ai.provider.name``, or the older ``gen_ai.system``."""
    for key in ("gen_ai.provider.name", "gen_ai.system"):
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def finish_reason_name(reason: Any) -> str | None:
    """A finish reason under its OpenAI name (``tool_call`` → ``tool_calls``)."""
    if reason is None:
        return None
    if not isinstance(reason, str):
        raise RecordError("mistyped_field", "finish_reason must be a string")
    return FINISH_REASONS.get(reason, reason)


def load_json_value(value: Any) -> Any:
    """A value that may be JSON text (as attributes often are) decoded; anything else as is."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            raise RecordError("malformed_json", "an attribute holds invalid JSON") from None
    return value


def to_int(value: Any, key: str) -> int | None:
    """An integer recorded as a number or as a decimal string; None stays None."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise RecordError("mistyped_field", f"{key} must be an integer, got a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise RecordError("mistyped_field", f"{key} must be an integer, got {value!r}")


def to_float(value: Any, key: str) -> float:
    """A number recorded as a number or as a string."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise RecordError("mistyped_field", f"{key} must be a number, got {value!r}")


def to_str_list(value: Any, key: str) -> list[str]:
    """A list of strings (stop sequences); a single string becomes a one-item list."""
    value = load_json_value(value)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    raise RecordError("mistyped_field", f"{key} must be a list of strings")


def optional_str(value: Any, key: str) -> str | None:
    """A string attribute that may be missing."""
    if value is None or isinstance(value, str):
        return value
    raise RecordError("mistyped_field", f"{key} must be a string, got {type(value).__name__}")


# gen_ai.request.* → the OpenAI chat-completions parameter name and how to read its value.
REQUEST_PARAMS: dict[str, tuple[str, Callable[[Any, str], Any]]] = {
    "gen_ai.request.temperature": ("temperature", to_float),
    "gen_ai.request.max_tokens": ("max_tokens", to_int),
    "gen_ai.request.top_p": ("top_p", to_float),
    "gen_ai.request.top_k": ("top_k", to_float),
    "gen_ai.request.seed": ("seed", to_int),
    "gen_ai.request.stop_sequences": ("stop", to_str_list),
    "gen_ai.request.frequency_penalty": ("frequency_penalty", to_float),
    "gen_ai.request.presence_penalty": ("presence_penalty", to_float),
    "gen_ai.request.choice.count": ("n", to_int),
}


def _output(value: Any) -> tuple[Message, str | None] | None:
    """The first output message and its finish reason; None when nothing was recorded."""
    value = load_json_value(value)
    if value is None or value == []:
        return None
    if not isinstance(value, list) or not isinstance(value[0], dict):
        raise RecordError("mistyped_field", "gen_ai.output.messages must be a list of messages")
    first = value[0]
    messages = message_from_genai(first)
    message = messages[-1]
    if message.role != "assistant":
        raise RecordError(
            "malformed_message", f"the output message has role {message.role!r}, not assistant"
        )
    return message, first.get("finish_reason")


def _tool_call(part: dict[str, Any]) -> ToolCall:
    """A ``tool_call`` part as a tool call."""
    name = part.get("name")
    if not isinstance(name, str) or not name:
        raise RecordError("malformed_tool_call", "tool_call part without a name")
    return ToolCall.from_raw(name, part.get("arguments"), optional_str(part.get("id"), "id"))


def _content_part(part: Any) -> ContentPart:
    """A non-tool part as a typed content part."""
    if not isinstance(part, dict) or not isinstance(part.get("type"), str):
        raise RecordError("malformed_message", "message parts must be typed objects")
    kind, text = part["type"], part.get("content")
    if kind in ("text", "reasoning"):
        if not isinstance(text, str):
            raise RecordError("malformed_message", f"{kind} part without text content")
        return ContentPart(type=kind, text=text)
    return ContentPart.model_validate(part)


def _content(parts: list[ContentPart]) -> str | list[ContentPart] | None:
    """Message content: one text part as plain text, several parts as a list."""
    if not parts:
        return None
    if len(parts) == 1 and parts[0].type == "text":
        return parts[0].text
    return parts


def _as_text(value: Any) -> str | None:
    """A tool response as text; structured responses as their JSON."""
    if value is None or isinstance(value, str):
        return value
    return orjson.dumps(value).decode()
