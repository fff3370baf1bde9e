"""The Vercel AI SDK's own span attributes (``ai.*``) as canonical LLM calls.

The AI SDK records each ``generateText``/``streamText`` call as an outer span (the turn: its
steps, tool executions and total usage) with one ``….doGenerate``/``….doStream`` span per model
call inside it. The model call's span carries ``ai.prompt.messages`` (the AI SDK's messages,
whose parts are ``text``, ``tool-call`` and ``tool-result``), ``ai.prompt.tools`` (one JSON
string per tool, the schema under ``inputSchema`` or ``parameters``), ``ai.prompt.toolChoice``,
``ai.response.text``, ``ai.response.toolCalls``, ``ai.response.finishReason``, ``ai.model.id``,
``ai.settings.*`` and ``ai.usage.*`` (``promptTokens``/``completionTokens`` before 5.0,
``inputTokens``/``outputTokens`` with cached and reasoning tokens since). Tool executions are
``ai.toolCall`` spans.

A ``generateObject``/``streamObject`` call answers with ``ai.response.object`` (the object's JSON
text) instead of a text; its schema (``ai.schema``, ``ai.schema.name``) is recorded on the outer
span, and becomes the request's ``response_format`` (see :func:`response_format`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_backtest.errors import RecordError
from agent_backtest.formats.genai_current import PARAM_READERS, optional_str, usage
from agent_backtest.formats.messages import (
    decoded,
    finish_reason_name,
    read_answer,
    read_messages,
    tool_list,
)
from agent_backtest.trace import (
    LLMCall,
    LLMRequest,
    LLMResponse,
    Message,
    ToolCall,
    ToolDef,
    ToolExecution,
)
from agent_backtest.trace.openai_wire import tool_def_from_openai

if TYPE_CHECKING:
    from agent_backtest.formats.span_model import Span

NAME = "vercel_ai"
MODEL_CALL_SUFFIXES = (".doGenerate", ".doStream")
CONTENT_KEYS = (
    "ai.prompt.messages",
    "ai.prompt.tools",
    "ai.prompt.toolChoice",
    "ai.prompt",
    "ai.response.text",
    "ai.response.toolCalls",
    "ai.response.object",
    "ai.toolCall.args",
    "ai.toolCall.result",
    "ai.toolCall.input",
    "ai.toolCall.output",
)
# ai.settings.* → the OpenAI chat-completions parameter it records.
SETTINGS = {
    "ai.settings.temperature": "temperature",
    "ai.settings.topP": "top_p",
    "ai.settings.topK": "top_k",
    "ai.settings.maxOutputTokens": "max_tokens",
    "ai.settings.maxTokens": "max_tokens",
    "ai.settings.seed": "seed",
    "ai.settings.stopSequences": "stop",
    "ai.settings.frequencyPenalty": "frequency_penalty",
    "ai.settings.presencePenalty": "presence_penalty",
}
# ai.usage.* under both the 4.x and the 5.x names.
USAGE = {
    "input_tokens": ("ai.usage.inputTokens", "ai.usage.promptTokens"),
    "output_tokens": ("ai.usage.outputTokens", "ai.usage.completionTokens"),
    "total_tokens": ("ai.usage.totalTokens",),
    "cached_input_tokens": ("ai.usage.cachedInputTokens",),
    "reasoning_tokens": ("ai.usage.reasoningTokens",),
}


def content_keys(attributes: dict[str, Any]) -> set[str]:
    """The attribute keys this dialect turns into the call (not kept twice in the step)."""
    return {key for key in CONTENT_KEYS if key in attributes}


def operation(attributes: dict[str, Any]) -> str | None:
    """The AI SDK operation a span records (``ai.generateText.doGenerate``, …), if any."""
    value = attributes.get("ai.operationId", attributes.get("operation.name"))
    return value if isinstance(value, str) and value.startswith("ai.") else None


def is_model_call(attributes: dict[str, Any]) -> bool:
    """True for the span of one model call (``doGenerate``/``doStream``)."""
    found = operation(attributes)
    return found is not None and found.endswith(MODEL_CALL_SUFFIXES)


def llm_call(span: Span) -> LLMCall | None:
    """The model call a ``doGenerate``/``doStream`` span records, or None for any other span."""
    attributes = span.attributes
    if not is_model_call(attributes):
        return None
    messages = attributes.get("ai.prompt.messages", span.input)
    request = LLMRequest(
        model=optional_str(attributes.get("ai.model.id"), "ai.model.id"),
        messages=read_messages(messages, "ai.prompt.messages") if messages is not None else [],
        tools=_tools(attributes.get("ai.prompt.tools")),
        tool_choice=_tool_choice(attributes.get("ai.prompt.toolChoice")),
        params={
            name: PARAM_READERS[name](attributes[key], key)
            for key, name in SETTINGS.items()
            if attributes.get(key) is not None
        },
    )
    format_ = response_format(attributes)
    if format_ is not None:
        request.params["response_format"] = format_
    call = LLMCall(request=request, provider=_provider(attributes))
    call.response = _response(span)
    return call


def response_format(attributes: dict[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` an object-generating span's ``ai.schema`` asks for, in the
    OpenAI form; None when the span records no schema."""
    schema = decoded(attributes.get("ai.schema"))
    if not isinstance(schema, dict):
        return None
    name = optional_str(attributes.get("ai.schema.name"), "ai.schema.name") or "response"
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


def tool_execution(span: Span) -> ToolExecution | None:
    """The execution an ``ai.toolCall`` span records, or None for any other span."""
    attributes = span.attributes
    if operation(attributes) != "ai.toolCall":
        return None
    name = optional_str(attributes.get("ai.toolCall.name"), "ai.toolCall.name") or span.name
    raw = attributes.get("ai.toolCall.args", attributes.get("ai.toolCall.input", span.input))
    result = attributes.get("ai.toolCall.result", attributes.get("ai.toolCall.output", span.output))
    return ToolExecution.from_raw(
        name,
        raw,
        call_id=optional_str(attributes.get("ai.toolCall.id"), "ai.toolCall.id"),
        result=decoded(result),
    )


def _response(span: Span) -> LLMResponse | None:
    """The answer: ``ai.response.text`` (or the JSON text of ``ai.response.object``) and
    ``ai.response.toolCalls``, else the source's output."""
    attributes = span.attributes
    text = attributes.get("ai.response.text", attributes.get("ai.response.object"))
    calls = decoded(attributes.get("ai.response.toolCalls"))
    if text is None and calls is None:
        answer = read_answer(span.output)
        if answer is None:
            return None
        message = answer.message
    else:
        if calls is not None and not isinstance(calls, list):
            raise RecordError("mistyped_field", "ai.response.toolCalls must be a list")
        message = Message(
            role="assistant",
            content=text if isinstance(text, str) and text else None,
            tool_calls=[_call(call) for call in calls or []] or None,
        )
    return LLMResponse(
        message=message,
        finish_reason=finish_reason_name(attributes.get("ai.response.finishReason")),
        usage=usage(attributes, USAGE),
        model=optional_str(attributes.get("ai.response.model"), "ai.response.model"),
        id=optional_str(attributes.get("ai.response.id"), "ai.response.id"),
    )


def _call(raw: Any) -> ToolCall:
    """One recorded AI SDK tool call (``toolCallId``, ``toolName``, ``args`` or ``input``)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("toolName"), str):
        raise RecordError("malformed_tool_call", "a tool call without a toolName")
    arguments = raw.get("input", raw.get("args"))
    return ToolCall.from_raw(raw["toolName"], arguments, raw.get("toolCallId"))


def _tools(value: Any) -> list[ToolDef] | None:
    """``ai.prompt.tools``: one JSON string (or object) per tool; None when not recorded."""
    tools = tool_list(value, "ai.prompt.tools")
    return None if tools is None else [tool_def_from_openai(decoded(tool)) for tool in tools]


def _tool_choice(value: Any) -> Any:
    """``ai.prompt.toolChoice`` in the OpenAI form (``auto``, or one named function)."""
    value = decoded(value)
    if isinstance(value, dict):
        kind = value.get("type")
        if kind == "tool" and isinstance(value.get("toolName"), str):
            return {"type": "function", "function": {"name": value["toolName"]}}
        if kind in ("auto", "none", "required"):
            return kind
    return value


def _provider(attributes: dict[str, Any]) -> str | None:
    """``ai.model.provider`` (``openai.responses``, …)."""
    value = attributes.get("ai.model.provider", attributes.get("gen_ai.system"))
    return value if isinstance(value, str) else None
