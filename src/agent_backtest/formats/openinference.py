"""OpenInference span attributes (Arize Phoenix and its instrumentations) as canonical calls.

OpenInference flattens lists into indexed attribute names:
``llm.input_messages.<i>.message.role``, ``….message.content``,
``….message.contents.<j>.message_content.text``,
``….message.tool_calls.<j>.tool_call.function.name``, ``llm.tools.<i>.tool.json_schema`` (the
OpenAI tool as JSON text). The request's other parameters are one JSON string,
``llm.invocation_parameters``; token counts are ``llm.token_count.*``. ``TOOL`` spans carry
``tool.name`` with the arguments in ``input.value`` and the result in ``output.value``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_backtest.errors import RecordError
from agent_backtest.formats.genai_current import load_json_value, optional_str, usage
from agent_backtest.formats.messages import Answer, finish_reason_name, read_answer, read_message
from agent_backtest.trace import (
    LLMCall,
    LLMRequest,
    LLMResponse,
    Message,
    ToolExecution,
)
from agent_backtest.trace.openai_wire import (
    REQUEST_KEYS,
    TRANSPORT_KEYS,
    message_to_wire,
    request_from_openai,
    tool_def_from_openai,
)

if TYPE_CHECKING:
    from agent_backtest.formats.span_model import Span

# Prefixes of the attributes that become the call or execution itself.
CONTENT_PREFIXES = (
    "llm.input_messages",
    "llm.output_messages",
    "llm.tools",
    "input.value",
    "output.value",
    "llm.invocation_parameters",
)


def content_keys(attributes: dict[str, Any]) -> set[str]:
    """The attribute keys this dialect turns into the call (not kept twice in the step)."""
    return {key for key in attributes if key.startswith(CONTENT_PREFIXES)}


def llm_call(span: Span) -> LLMCall | None:
    """The call an OpenInference ``LLM`` span records, or None for any other span."""
    attributes = span.attributes
    if attributes.get("openinference.span.kind") != "LLM":
        return None
    params = _invocation_parameters(attributes)
    notes = []
    instructions = None
    if _is_response_object(params):
        instructions = params.get("instructions")
        params = _response_settings(params)
        notes.append(
            "llm.invocation_parameters holds the Responses object the call returned; only "
            "the settings it was asked with are kept (temperature, top_p, max_output_tokens, "
            "parallel_tool_calls, reasoning effort)"
        )
    tool_choice = params.pop("tool_choice", None)
    invoked_model = params.pop("model", None)
    for key in (*REQUEST_KEYS, *TRANSPORT_KEYS):
        params.pop(key, None)
    params = {key: value for key, value in params.items() if value is not None}
    request = LLMRequest(
        model=_first_str(attributes, "llm.request.model_name")
        or _str(invoked_model)
        or _first_str(attributes, "llm.model_name"),
        messages=[m for raw in indexed(attributes, "llm.input_messages") for m in _message(raw)],
        tools=_tools(attributes),
        tool_choice=tool_choice,
        params=params,
    )
    if isinstance(instructions, str) and not any(m.role == "system" for m in request.messages):
        request.messages.insert(0, Message(role="system", content=instructions))
        notes.append("system message taken from the Responses object's instructions")
    call = LLMCall(
        request=request,
        response=_response(attributes),
        provider=_first_str(attributes, "llm.provider", "llm.system"),
        notes=notes,
    )
    _fill_from_values(call, attributes)
    return call


def tool_execution(span: Span) -> ToolExecution | None:
    """The execution an OpenInference ``TOOL`` span records, or None for any other span."""
    attributes = span.attributes
    if attributes.get("openinference.span.kind") != "TOOL":
        return None
    return ToolExecution.from_raw(
        _first_str(attributes, "tool.name") or span.name,
        attributes.get("input.value"),
        call_id=_first_str(attributes, "tool_call.id", "tool.id"),
        result=attributes.get("output.value"),
    )


def indexed(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The items of a flattened list ``<prefix>.<i>.<rest>``, each as ``{rest: value}``.

    An exporter that kept the list structured (``<prefix>: [{…}]``) is accepted as well.
    """
    direct = attributes.get(prefix)
    if isinstance(direct, list):
        return [item for item in direct if isinstance(item, dict)]
    items: dict[int, dict[str, Any]] = {}
    start = prefix + "."
    for key, value in attributes.items():
        if key.startswith(start):
            index, _, rest = key[len(start) :].partition(".")
            if index.isdigit() and rest:
                items.setdefault(int(index), {})[rest] = value
    return [items[index] for index in sorted(items)]


def _message(raw: dict[str, Any]) -> list[Message]:
    """One flattened OpenInference message as a canonical message."""
    message: dict[str, Any] = {
        "role": raw.get("message.role"),
        "content": raw.get("message.content"),
    }
    contents = indexed(raw, "message.contents")
    if message["content"] is None and contents:
        message["content"] = [_content_part(part) for part in contents]
    calls = [_tool_call(call) for call in indexed(raw, "message.tool_calls")]
    if not calls and raw.get("message.function_call_name"):
        calls = [
            {
                "function": {
                    "name": raw["message.function_call_name"],
                    "arguments": raw.get("message.function_call_arguments_json"),
                }
            }
        ]
    if calls:
        message["tool_calls"] = calls
    for key in ("tool_call_id", "name"):
        if raw.get(f"message.{key}") is not None:
            message[key] = raw[f"message.{key}"]
    return read_message(message)


def _content_part(raw: dict[str, Any]) -> dict[str, Any]:
    """One ``message_content`` item as an OpenAI content part."""
    kind = raw.get("message_content.type", "text")
    if kind == "image":
        return {
            "type": "image_url",
            "image_url": {"url": raw.get("message_content.image.image.url")},
        }
    part = {"type": kind}
    if raw.get("message_content.text") is not None:
        part["text"] = raw["message_content.text"]
    return part


def _tool_call(raw: dict[str, Any]) -> dict[str, Any]:
    """One flattened tool call as an OpenAI tool call."""
    call = {
        "function": {
            "name": raw.get("tool_call.function.name"),
            "arguments": raw.get("tool_call.function.arguments"),
        }
    }
    if raw.get("tool_call.id") is not None:
        call["id"] = raw["tool_call.id"]
    return call


def _tools(attributes: dict[str, Any]) -> list[Any] | None:
    """The advertised tools; None when the span records none."""
    tools = indexed(attributes, "llm.tools")
    if not tools:
        return None  # not recorded, which is not the same as "no tools"
    return [tool_def_from_openai(load_json_value(tool.get("tool.json_schema"))) for tool in tools]


def _response(attributes: dict[str, Any]) -> LLMResponse | None:
    """The first output message with finish reason, usage and model."""
    outputs = indexed(attributes, "llm.output_messages")
    if not outputs:
        return None
    answer = read_answer([_output_message(raw) for raw in outputs])
    if answer is None:
        return None
    return LLMResponse(
        message=answer.message,
        finish_reason=finish_reason_name(attributes.get("llm.finish_reason"))
        or answer.finish_reason,
        usage=usage(attributes, USAGE_KEYS),
        model=_first_str(attributes, "llm.response.model_name", "llm.model_name"),
    )


def _output_message(raw: dict[str, Any]) -> dict[str, Any]:
    """One flattened output message as an assistant message (Gemini's role ``model`` too)."""
    message = _message(raw)[-1]
    return {**message_to_wire(message), "role": message.role}


# Usage fields and the llm.token_count.* attributes that record them.
USAGE_KEYS = {
    "input_tokens": ("llm.token_count.prompt",),
    "output_tokens": ("llm.token_count.completion",),
    "total_tokens": ("llm.token_count.total",),
    "cached_input_tokens": ("llm.token_count.prompt_details.cache_read",),
    "reasoning_tokens": ("llm.token_count.completion_details.reasoning",),
}


# A Responses object (the OpenAI Agents SDK records it as the invocation parameters) echoes
# every setting, defaults included; these are the ones a chat request can be asked with.
RESPONSE_SETTINGS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_output_tokens": "max_tokens",
    "parallel_tool_calls": "parallel_tool_calls",
    "tool_choice": "tool_choice",
    "model": "model",
}


def _is_response_object(params: dict[str, Any]) -> bool:
    """True when the parameters are a whole Responses object rather than request settings."""
    return params.get("object") == "response" or (
        "created_at" in params and str(params.get("id", "")).startswith("resp_")
    )


def _response_settings(params: dict[str, Any]) -> dict[str, Any]:
    """The request settings a Responses object echoes, under the chat-completions names."""
    kept = {
        name: params[key] for key, name in RESPONSE_SETTINGS.items() if params.get(key) is not None
    }
    reasoning = params.get("reasoning")
    if isinstance(reasoning, dict) and reasoning.get("effort"):
        kept["reasoning_effort"] = reasoning["effort"]
    return kept


def _invocation_parameters(attributes: dict[str, Any]) -> dict[str, Any]:
    """``llm.invocation_parameters`` as a dict."""
    value = load_json_value(attributes.get("llm.invocation_parameters"))
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RecordError("mistyped_field", "llm.invocation_parameters must be a JSON object")
    return dict(value)


def _fill_from_values(call: LLMCall, attributes: dict[str, Any]) -> None:
    """What the message attributes lack, from the raw bodies in ``input.value`` and
    ``output.value`` or the completion prompts in ``llm.prompts``."""
    body = _json_value(attributes, "input")
    listed = body.get("messages") if isinstance(body, dict) else None
    if not call.request.messages and _all_of(listed, dict):
        raw = request_from_openai(body)
        call.request.messages = raw.messages
        call.request.tools = call.request.tools if raw.tools is None else raw.tools
        call.request.model = call.request.model or raw.model
        call.notes.append("request read from input.value")
    prompts = load_json_value(attributes.get("llm.prompts"))
    if not call.request.messages and _all_of(prompts, str):
        call.request.messages = [Message(role="user", content=p) for p in prompts]
        call.notes.append("request read from llm.prompts (a completion prompt)")
    if call.response is None:
        answer = _answer_value(attributes)
        if answer is not None:
            call.response = LLMResponse(
                message=answer.message,
                finish_reason=answer.finish_reason,
                usage=usage(attributes, USAGE_KEYS) or answer.usage,
                model=_first_str(attributes, "llm.response.model_name", "llm.model_name")
                or answer.model,
                id=answer.response_id,
            )
            call.notes.append("response read from output.value")


def _all_of(value: Any, kind: type) -> bool:
    """True for a non-empty list whose items all have the type."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, kind) for v in value)


def _answer_value(attributes: dict[str, Any]) -> Answer | None:
    """``output.value`` as an answer: a JSON body in any known shape, or plain text."""
    value = attributes.get("output.value")
    if attributes.get("output.mime_type") == "application/json":
        value = _json_value(attributes, "output")
    if value is None or value == "":
        return None
    if isinstance(value, dict) and not any(
        key in value for key in ("choices", "candidates", "content", "message", "output", "role")
    ):
        return None  # a framework's own result object, not a model's answer
    return read_answer(value)


def _json_value(attributes: dict[str, Any], name: str) -> Any:
    """``input.value``/``output.value`` decoded when its mime type says JSON."""
    if attributes.get(f"{name}.mime_type") != "application/json":
        return None
    try:
        return load_json_value(attributes.get(f"{name}.value"))
    except RecordError:
        return None


def _first_str(attributes: dict[str, Any], *keys: str) -> str | None:
    """The first non-empty string among the keys."""
    for key in keys:
        value = optional_str(attributes.get(key), key)
        if value:
            return value
    return None


def _str(value: Any) -> str | None:
    """The value when it is a non-empty string."""
    return value if isinstance(value, str) and value else None
