"""The OpenTelemetry GenAI semantic conventions (1.37 and later) as canonical LLM calls.

Since 1.37 a GenAI span carries the conversation as attributes: ``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.system_instructions`` and ``gen_ai.tool.definitions``,
each a JSON string or an already structured value, with messages made of typed ``parts``.
The request, usage and response attributes (``gen_ai.request.*``, ``gen_ai.usage.*``,
``gen_ai.response.*``) are older and shared with the event form, so the helpers reading them
live here and :mod:`genai_events` reuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import orjson

from agent_backtest.errors import RecordError
from agent_backtest.formats import pydantic_ai
from agent_backtest.formats.messages import (
    finish_reason_name,
    read_answer,
    read_message,
    read_messages,
)
from agent_backtest.trace import (
    ContentPart,
    LLMCall,
    LLMResponse,
    Message,
    ToolDef,
    ToolExecution,
    Usage,
)
from agent_backtest.trace.openai_wire import tools_from_openai

if TYPE_CHECKING:
    from agent_backtest.formats.span_model import Span

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


def content_keys(attributes: dict[str, Any]) -> set[str]:
    """The attribute keys this dialect turns into the call (not kept twice in the step)."""
    return {key for key in CONTENT_KEYS if key in attributes}


def claims(attributes: dict[str, Any]) -> bool:
    """True when the span records its conversation in the current attribute form."""
    return "gen_ai.input.messages" in attributes or "gen_ai.output.messages" in attributes


def llm_call(span: Span) -> LLMCall | None:
    """The call a span records in the current attribute form, or None if it uses another.

    The call is put together as plain values and validated once, nested parts and all.
    """
    attributes = span.attributes
    if not claims(attributes):
        return None
    fields = metadata_fields(attributes)
    messages = messages_from_genai(attributes.get("gen_ai.input.messages"), "gen_ai.input.messages")
    instructions = system_instructions(attributes.get("gen_ai.system_instructions"))
    if instructions is not None and not any(m.role == "system" for m in messages):
        messages.insert(0, Message(role="system", content=instructions))
    request = fields["request"]
    request["messages"] = messages
    alternatives = (request["params"].get("n") or 1) > 1
    answer = read_answer(attributes.get("gen_ai.output.messages"), alternatives)
    if answer is not None:
        fields["response"] = response_fields(attributes, answer.message, answer.finish_reason)
        fields["notes"] = answer.notes
    return LLMCall.model_validate(fields)


def tool_execution(span: Span) -> ToolExecution | None:
    """The tool execution of an ``execute_tool`` span, or None for any other span."""
    attributes = span.attributes
    if attributes.get("gen_ai.operation.name") != "execute_tool" and (
        "gen_ai.tool.name" not in attributes
    ):
        return None
    name = attributes.get("gen_ai.tool.name")
    if not isinstance(name, str) or not name:
        name = span.name.removeprefix("execute_tool").strip() or span.name
    return ToolExecution.from_raw(
        name,
        attributes.get("gen_ai.tool.call.arguments"),
        call_id=optional_str(attributes.get("gen_ai.tool.call.id"), "gen_ai.tool.call.id"),
        result=attributes.get("gen_ai.tool.call.result"),
    )


def metadata_only_call(attributes: dict[str, Any]) -> LLMCall:
    """A call with everything the span says except the messages (model, tools, params)."""
    return LLMCall.model_validate(metadata_fields(attributes))


def metadata_fields(attributes: dict[str, Any]) -> dict[str, Any]:
    """The fields of :func:`metadata_only_call` as plain values, for a reader that adds the
    messages and the answer before the one validation of the call."""
    return {
        "request": {
            "model": optional_str(attributes.get("gen_ai.request.model"), "gen_ai.request.model"),
            "messages": [],
            "tools": tool_definitions(attributes.get("gen_ai.tool.definitions"))
            or pydantic_ai.tools(attributes),
            "params": request_params(attributes),
        },
        "provider": provider(attributes),
    }


def response(
    attributes: dict[str, Any], message: Message, finish_reason: str | None
) -> LLMResponse:
    """The answer: the message, plus usage, model, id and finish reason from the attributes."""
    return LLMResponse.model_validate(response_fields(attributes, message, finish_reason))


def response_fields(
    attributes: dict[str, Any], message: Message, finish_reason: str | None
) -> dict[str, Any]:
    """The fields of :func:`response` as plain values."""
    if finish_reason is None:
        reasons = load_json_value(attributes.get("gen_ai.response.finish_reasons"))
        if isinstance(reasons, str):
            reasons = [reasons]
        if isinstance(reasons, list) and reasons and isinstance(reasons[0], str):
            finish_reason = reasons[0]
    return {
        "message": message,
        "finish_reason": finish_reason_name(finish_reason),
        "usage": usage_counts(attributes),
        "model": optional_str(attributes.get("gen_ai.response.model"), "gen_ai.response.model"),
        "id": optional_str(attributes.get("gen_ai.response.id"), "gen_ai.response.id"),
    }


def system_instructions(value: Any) -> str | list[ContentPart] | None:
    """``gen_ai.system_instructions`` (a string, or a list of parts) as message content."""
    if isinstance(value, str):
        content = _instructions_text(value)
        return list(content) if isinstance(content, tuple) else content
    return _instructions_content(value)


@lru_cache(maxsize=64)
def _instructions_text(text: str) -> str | tuple[ContentPart, ...] | None:
    """Instructions recorded as text (or as parts in JSON text), read once per distinct text:
    an agent records the same instructions on every call (parts are never changed in place,
    so messages may share them)."""
    try:
        value = load_json_value(text)
    except RecordError:
        return text  # plain instructions that merely start with a bracket
    content = _instructions_content(value)
    return tuple(content) if isinstance(content, list) else content


def _instructions_content(value: Any) -> str | list[ContentPart] | None:
    """Decoded instructions (text or parts) as message content."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise RecordError("mistyped_field", "gen_ai.system_instructions must be text or parts")
    return read_message({"role": "system", "parts": value})[-1].content


def messages_from_genai(value: Any, key: str) -> list[Message]:
    """A list of GenAI messages (``{role, parts}``; every other known shape is accepted too)."""
    value = load_json_value(value)
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError("mistyped_field", f"{key} must be a list of messages")
    return read_messages(value, key)


def tool_definitions(value: Any) -> list[Any] | None:
    """``gen_ai.tool.definitions`` as tool definitions; None when not recorded."""
    if isinstance(value, str):
        found = _tool_definitions_text(value)
        return list(found) if found is not None else None
    if isinstance(value, dict):
        value = [value]
    return tools_from_openai(value)


@lru_cache(maxsize=64)
def _tool_definitions_text(text: str) -> tuple[ToolDef, ...] | None:
    """The tool definitions recorded as JSON text, read once per distinct text: an agent sends
    the same tools with every call, so every chat span of a session records the same text (the
    definitions are never changed in place, so calls may share them)."""
    value = load_json_value(text)
    if isinstance(value, dict):
        value = [value]
    found = tools_from_openai(value)
    return tuple(found) if found is not None else None


def request_params(attributes: dict[str, Any]) -> dict[str, Any]:
    """``gen_ai.request.*`` sampling parameters under their OpenAI names (an older name only
    when the current one is not recorded)."""
    params: dict[str, Any] = {}
    if REQUEST_PARAM_KEYS.isdisjoint(attributes):
        return params  # most spans record no sampling parameter
    for key, name in REQUEST_PARAMS.items():
        # Instrumentations write a setting left unset as "" (OpenLit's seed, for one).
        if name not in params and attributes.get(key) not in (None, ""):
            params[name] = PARAM_READERS[name](attributes[key], key)
    return params


# Usage fields and the attribute names that record them, the current name first.
USAGE_KEYS = {
    "input_tokens": ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"),
    "output_tokens": ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"),
    "total_tokens": ("gen_ai.usage.total_tokens", "llm.usage.total_tokens"),
    "cached_input_tokens": (
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.cache_read_input_tokens",
        "gen_ai.usage.details.cached_content_tokens",
    ),
    "reasoning_tokens": (
        "gen_ai.usage.reasoning.output_tokens",
        "gen_ai.usage.reasoning_tokens",
        "gen_ai.usage.details.thoughts_tokens",
    ),
}


def usage(
    attributes: dict[str, Any], keys: Mapping[str, tuple[str, ...]] = USAGE_KEYS
) -> Usage | None:
    """Token counts from the attributes ``keys`` names for each usage field (the first one
    recorded wins); None when none is recorded. By default ``gen_ai.usage.*``, with cached input
    and reasoning tokens under the names instrumentations use."""
    found = usage_counts(attributes, keys)
    return Usage(**found) if found is not None else None


def usage_counts(
    attributes: dict[str, Any], keys: Mapping[str, tuple[str, ...]] = USAGE_KEYS
) -> dict[str, int | None] | None:
    """The fields of :func:`usage` as plain values; None when no count is recorded."""
    found: dict[str, int | None] = {}
    for field, names in keys.items():
        for key in names:
            value = attributes.get(key)
            if value is not None:
                found[field] = to_int(value, key)
                break
    # Kept only when something was recorded: most spans of a step's kind record nothing.
    return found if any(value is not None for value in found.values()) else None


def provider(attributes: dict[str, Any]) -> str | None:
    """``gen_ai.provider.name``, or the older ``gen_ai.system``."""
    for key in ("gen_ai.provider.name", "gen_ai.system"):
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


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


# How a sampling parameter's recorded value is read, by its OpenAI chat-completions name.
PARAM_READERS: dict[str, Callable[[Any, str], Any]] = {
    "temperature": to_float,
    "max_tokens": to_int,
    "top_p": to_float,
    "top_k": to_float,
    "seed": to_int,
    "stop": to_str_list,
    "frequency_penalty": to_float,
    "presence_penalty": to_float,
    "n": to_int,
}
# gen_ai.request.* → the OpenAI chat-completions parameter it records.
REQUEST_PARAMS = {
    "gen_ai.request.temperature": "temperature",
    "gen_ai.request.max_tokens": "max_tokens",
    "gen_ai.request.top_p": "top_p",
    "gen_ai.request.top_k": "top_k",
    "gen_ai.request.seed": "seed",
    "gen_ai.request.stop_sequences": "stop",
    "gen_ai.request.frequency_penalty": "frequency_penalty",
    "gen_ai.request.presence_penalty": "presence_penalty",
    "gen_ai.request.choice.count": "n",
    # OpenLLMetry's names, before and beside the GenAI ones.
    "gen_ai.chat.stop_sequences": "stop",
    "llm.chat.stop_sequences": "stop",
    "llm.top_p": "top_p",
    "llm.top_k": "top_k",
    "llm.frequency_penalty": "frequency_penalty",
    "llm.presence_penalty": "presence_penalty",
}
REQUEST_PARAM_KEYS = frozenset(REQUEST_PARAMS)
