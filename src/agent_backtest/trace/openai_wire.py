"""The OpenAI chat-completions wire format, both ways: canonical records to and from it.

Readers decode it (request/response logs, cassettes, τ-bench trajectories, tool files, spans
that embed OpenAI messages) and providers encode requests in it and decode answers, so both
directions live here once. Decoding raises :class:`RecordError` with a named reason for a
malformed piece; the calling reader turns it into a skip. Encoding sends a request as production
recorded it; only what the target cannot take is removed, and each removal is returned so the
run can record it.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import ValidationError

from agent_backtest.errors import RecordError
from agent_backtest.redaction import TRANSPORT_OPTIONS, is_secret_name
from agent_backtest.trace.models import (
    ContentPart,
    LLMRequest,
    LLMResponse,
    Message,
    ToolCall,
    ToolDef,
    Usage,
)

ROLES = ("system", "developer", "user", "assistant", "tool")
# The body parameters of /chat/completions besides model, messages, tools and tool_choice: only
# these go on the wire. A recorded parameter the API does not know stays in the unit and is
# listed as an adjustment, since a strict server refuses the whole request for it.
WIRE_PARAMS = frozenset(
    {
        "audio",
        "frequency_penalty",
        "logit_bias",
        "logprobs",
        "max_completion_tokens",
        "max_tokens",
        "metadata",
        "modalities",
        "n",
        "parallel_tool_calls",
        "prediction",
        "presence_penalty",
        "prompt_cache_key",
        "reasoning_effort",
        "response_format",
        "safety_identifier",
        "seed",
        "service_tier",
        "stop",
        "store",
        "temperature",
        "top_logprobs",
        "top_p",
        "user",
        "verbosity",
        "web_search_options",
    }
)
# Other APIs' names for chat-completions parameters, renamed on the wire.
PARAM_ALIASES = {
    "stop_sequences": "stop",
    "stopSequences": "stop",
    "max_output_tokens": "max_tokens",
    "maxOutputTokens": "max_tokens",
    "maxTokens": "max_tokens",
    "topP": "top_p",
    "candidate_count": "n",
    "candidateCount": "n",
    "presencePenalty": "presence_penalty",
    "frequencyPenalty": "frequency_penalty",
}
# Content part types chat completions takes, by role; other parts stay in the trace.
USER_PARTS = frozenset({"text", "image_url", "input_audio", "file"})
ASSISTANT_PARTS = frozenset({"text", "refusal"})
TEXT_ONLY = frozenset({"text"})
REQUEST_KEYS = ("model", "messages", "tools", "tool_choice")
# Where tool definitions keep their JSON Schema: OpenAI, Anthropic, the AI SDK and MCP, Gemini.
SCHEMA_KEYS = (
    "parameters",
    "input_schema",
    "inputSchema",
    "parametersJsonSchema",
    "parameters_json_schema",
)
# Keys of a request that describe transport or accounting, not what the model is asked.
TRANSPORT_KEYS = ("stream", "stream_options", "user", "store", "metadata")


def message_from_openai(raw: Any) -> Message:
    """One OpenAI chat message (any role) as a canonical message."""
    if not isinstance(raw, dict):
        raise RecordError("malformed_message", f"a message must be an object, got {_kind(raw)}")
    role = raw.get("role")
    if role == "function":  # the pre-tools form of a tool result
        role = "tool"
    if role not in ROLES:
        raise RecordError("malformed_message", f"unknown message role {role!r}")
    tool_calls = raw.get("tool_calls")
    if tool_calls is None and isinstance(raw.get("function_call"), dict):
        tool_calls = [{"function": raw["function_call"]}]
    if tool_calls and not isinstance(tool_calls, list):
        raise RecordError("malformed_message", f"tool_calls is a {_kind(tool_calls)}, not a list")
    return Message(
        role=role,
        content=content_from_openai(raw.get("content")),
        tool_calls=[tool_call_from_openai(call) for call in tool_calls] if tool_calls else None,
        tool_call_id=_optional_str(raw.get("tool_call_id"), "tool_call_id"),
        name=_optional_str(raw.get("name"), "name"),
    )


def content_from_openai(raw: Any) -> str | list[ContentPart] | None:
    """Message content: a string, a list of typed parts, or None."""
    if raw is None or isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        parts = []
        for part in raw:
            if isinstance(part, str):
                parts.append(ContentPart(type="text", text=part))
            elif isinstance(part, dict) and isinstance(part.get("type"), str):
                parts.append(_content_part(part))
            else:
                raise RecordError("malformed_message", "content parts must be typed objects")
        return parts
    raise RecordError("malformed_message", f"content must be text or parts, got {_kind(raw)}")


def _content_part(part: dict[str, Any]) -> ContentPart:
    try:
        return ContentPart.model_validate(part)
    except ValidationError:
        raise RecordError(
            "malformed_message", "a text content part's text is not a string"
        ) from None


def tool_call_from_openai(raw: Any) -> ToolCall:
    """``{"id", "type": "function", "function": {"name", "arguments"}}`` (or the flat form)."""
    if not isinstance(raw, dict):
        raise RecordError("malformed_tool_call", f"a tool call must be an object, got {_kind(raw)}")
    function = raw.get("function", raw)
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise RecordError("malformed_tool_call", "tool call without a function name")
    return ToolCall.from_raw(
        function["name"], function.get("arguments"), _optional_str(raw.get("id"), "tool call id")
    )


def tool_def_from_openai(raw: Any) -> ToolDef:
    """A tool definition, nested ``{"type": "function", "function": {...}}`` or flat."""
    if not isinstance(raw, dict):
        raise RecordError("malformed_tool_definition", f"expected an object, got {_kind(raw)}")
    function = raw.get("function") if isinstance(raw.get("function"), dict) else raw
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise RecordError("malformed_tool_definition", "tool definition without a name")
    parameters = next((function[key] for key in SCHEMA_KEYS if function.get(key) is not None), None)
    if parameters is not None and not isinstance(parameters, dict):
        raise RecordError("malformed_tool_definition", f"parameters of {name!r} are not an object")
    description = function.get("description")
    strict = function.get("strict")
    return ToolDef(
        name=name,
        description=description if isinstance(description, str) else None,
        parameters=parameters,
        strict=strict if isinstance(strict, bool) else None,
    )


def tools_from_openai(raw: Any) -> list[ToolDef] | None:
    """A list of tool definitions; None stays None (not recorded)."""
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise RecordError("malformed_tool_definition", f"tools must be a list, got {_kind(raw)}")
    return [tool_def_from_openai(tool) for tool in raw]


def request_from_openai(payload: Any) -> LLMRequest:
    """A chat-completions request body as a canonical request; other keys become params."""
    if not isinstance(payload, dict):
        raise RecordError("malformed_request", f"request must be an object, got {_kind(payload)}")
    messages = payload.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RecordError("malformed_request", "request has no messages list")
    params = {k: v for k, v in payload.items() if k not in REQUEST_KEYS + TRANSPORT_KEYS}
    return LLMRequest(
        model=_optional_str(payload.get("model"), "model"),
        messages=[message_from_openai(m) for m in messages],
        # A logged request body is complete: no tools key means none were offered ([]).
        tools=tools_from_openai(payload.get("tools", payload.get("functions", []))),
        tool_choice=payload.get("tool_choice"),
        params=params,
    )


def response_from_openai(body: Any) -> LLMResponse:
    """A chat-completions response body (its first choice) as a canonical response."""
    if not isinstance(body, dict):
        raise RecordError("malformed_response", f"response must be an object, got {_kind(body)}")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise RecordError("no_response", "response has no choices")
    choice = choices[0]
    return LLMResponse(
        message=message_from_openai(choice.get("message")),
        finish_reason=_optional_str(choice.get("finish_reason"), "finish_reason"),
        usage=usage_from_openai(body.get("usage")),
        model=_optional_str(body.get("model"), "model"),
        id=_optional_str(body.get("id"), "id"),
    )


def usage_from_openai(raw: Any) -> Usage | None:
    """OpenAI usage (chat completions or Responses names) with cached input and reasoning
    tokens; None when there is none."""
    if not isinstance(raw, dict):
        return None
    prompt = raw.get("prompt_tokens_details") or raw.get("input_tokens_details") or {}
    completion = raw.get("completion_tokens_details") or raw.get("output_tokens_details") or {}
    return Usage(
        input_tokens=first_count(raw, "prompt_tokens", "input_tokens"),
        output_tokens=first_count(raw, "completion_tokens", "output_tokens"),
        total_tokens=first_count(raw, "total_tokens"),
        cached_input_tokens=first_count(prompt, "cached_tokens"),
        reasoning_tokens=first_count(completion, "reasoning_tokens"),
    )


def first_count(raw: Any, *keys: str) -> int | None:
    """The first integer among the keys of a usage object."""
    if not isinstance(raw, dict):
        return None
    for key in keys:
        value = raw.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _optional_str(value: Any, what: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise RecordError("mistyped_field", f"{what} must be a string, got {_kind(value)}")


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def chat_payload(
    request: LLMRequest,
    model: str,
    seed: int | None,
    drop_schema_keys: list[str] | None = None,
    drop_params: list[str] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The ``/chat/completions`` body for ``request`` sent to ``model``, and the adjustments:
    everything the API would refuse (unknown parameters, parts it does not take, reasoning) is
    left out or renamed, and each change is listed."""
    adjustments: list[str] = []
    payload: dict[str, Any] = {
        "model": model,
        "messages": [
            wire for m in request.messages if (wire := _wire_message(m, adjustments)) is not None
        ],
    }
    if request.tools:
        payload["tools"] = [
            tool_to_wire(t, drop_schema_keys or [], adjustments) for t in request.tools
        ]
        if request.tool_choice is not None:
            payload["tool_choice"] = request.tool_choice
    elif request.tool_choice is not None:
        # OpenAI refuses tool_choice without tools.
        adjustments.append("removed tool_choice: no tools were offered")
    for key, value in request.params.items():
        name = PARAM_ALIASES.get(key, key)
        if key in (drop_params or []):
            adjustments.append(f"removed parameter {key} (config drop_params)")
        elif name == "seed":
            continue
        elif name in TRANSPORT_OPTIONS or is_secret_name(key):
            adjustments.append(f"removed {key}: a credential or transport option")
        elif name not in WIRE_PARAMS:
            adjustments.append(f"left out parameter {key}: not a chat-completions parameter")
        elif name in payload:
            adjustments.append(f"left out parameter {key}: {name} is set already")
        else:
            if name != key:
                adjustments.append(f"sent parameter {key} as {name}")
            payload[name] = value
    if seed is not None:
        payload["seed"] = seed
    return payload, adjustments


def message_to_wire(message: Message) -> dict[str, Any]:
    """A canonical message as an OpenAI chat message (tool arguments as JSON strings)."""
    wire: dict[str, Any] = {"role": message.role}
    if isinstance(message.content, list):
        wire["content"] = [part.model_dump(exclude_none=True) for part in message.content]
    else:
        wire["content"] = message.content
    if message.tool_calls:
        wire["tool_calls"] = [tool_call_to_wire(call) for call in message.tool_calls]
    if message.tool_call_id is not None:
        wire["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        wire["name"] = message.name
    return wire


def _wire_message(message: Message, adjustments: list[str]) -> dict[str, Any] | None:
    """A message as chat completions takes it: content parts its role cannot carry (reasoning,
    encrypted reasoning, unknown parts) left out and listed; None when nothing is left."""
    wire = message_to_wire(message)
    if isinstance(message.content, list):
        allowed = parts_the_api_takes(message.role)
        kept = []
        for part in message.content:
            if part.type in allowed:
                kept.append(part.model_dump(exclude_none=True))
            else:
                what = "encrypted reasoning" if _encrypted(part) else f"a {part.type} part"
                adjustments.append(f"left out {what} (role {message.role})")
        if len(kept) == 1 and kept[0]["type"] == "text" and message.role != "user":
            wire["content"] = kept[0]["text"]
        else:
            wire["content"] = kept or None
        if not kept and not message.tool_calls:
            adjustments.append(
                f"left out a message with nothing the API takes (role {message.role})"
            )
            return None
    if message.role == "tool" and wire["content"] is None:
        wire["content"] = ""
    if message.role == "tool":
        wire.pop("name", None)  # chat completions names the call by id, not the tool
    return wire


def parts_the_api_takes(role: str) -> frozenset[str]:
    """The content part types chat completions takes in a message of this role; the others
    (reasoning, encrypted reasoning, parts of other APIs) stay in the trace and are left out."""
    if role == "user":
        return USER_PARTS
    if role == "assistant":
        return ASSISTANT_PARTS
    return TEXT_ONLY


def _encrypted(part: ContentPart) -> bool:
    """True for a reasoning part that holds only encrypted or redacted content."""
    extra = part.model_extra or {}
    return part.type in ("reasoning", "redacted_thinking") and (
        "encrypted_content" in extra or "signature" in extra or part.type == "redacted_thinking"
    )


def tool_call_to_wire(call: ToolCall) -> dict[str, Any]:
    """A tool call in OpenAI form; arguments that never parsed go back exactly as recorded."""
    if call.arguments_raw is not None:
        arguments = call.arguments_raw
    else:
        arguments = orjson.dumps(call.arguments if call.arguments is not None else {}).decode()
    wire: dict[str, Any] = {
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    }
    if call.id is not None:
        wire["id"] = call.id
    return wire


def tool_to_wire(
    tool: ToolDef, drop_schema_keys: list[str], adjustments: list[str]
) -> dict[str, Any]:
    """A tool definition in the nested OpenAI form."""
    function: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        function["description"] = tool.description
    if tool.parameters is not None:
        function["parameters"] = (
            _without_keys(tool.parameters, set(drop_schema_keys), f"tool {tool.name}", adjustments)
            if drop_schema_keys
            else tool.parameters
        )
    if tool.strict is not None:
        function["strict"] = tool.strict
    return {"type": "function", "function": function}


def _without_keys(schema: Any, keys: set[str], where: str, adjustments: list[str]) -> Any:
    if isinstance(schema, dict):
        kept = {}
        for key, value in schema.items():
            if key in keys:
                adjustments.append(f"removed schema key {key} from {where}")
                continue
            kept[key] = _without_keys(value, keys, f"{where}.{key}", adjustments)
        return kept
    if isinstance(schema, list):
        return [_without_keys(item, keys, where, adjustments) for item in schema]
    return schema
