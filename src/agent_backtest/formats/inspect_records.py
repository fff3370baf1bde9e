"""Inspect AI's recorded model calls as canonical calls: chat messages, tools, tool choice,
generation config and model output, as an evaluation log writes them.

Inspect names things its own way: a tool call is ``{id, function, arguments}`` with the arguments
as an object, a tool is ``{name, description, parameters}``, the tool choice is ``"auto"``,
``"any"``, ``"none"`` or ``{"name": ...}``, and an answer's ``stop_reason`` is one of ``stop``,
``max_tokens``, ``model_length``, ``tool_calls``, ``content_filter`` or ``unknown``.
"""

from __future__ import annotations

from typing import Any

from agent_backtest import trace
from agent_backtest.errors import RecordError
from agent_backtest.formats.run_steps import text_or_none as _text_or_none
from agent_backtest.trace.openai_wire import first_count

ROLES = ("system", "user", "assistant", "tool")
# Inspect's generation settings that are request parameters, by their chat-completions names.
# The rest of a config (connections, timeouts, retries, caching) is how Inspect ran the call.
REQUEST_PARAMS = {
    "max_tokens": "max_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "stop_seqs": "stop",
    "seed": "seed",
    "frequency_penalty": "frequency_penalty",
    "presence_penalty": "presence_penalty",
    "logit_bias": "logit_bias",
    "logprobs": "logprobs",
    "top_logprobs": "top_logprobs",
    "num_choices": "n",
    "parallel_tool_calls": "parallel_tool_calls",
    "reasoning_effort": "reasoning_effort",
}
FINISH_REASONS = {
    "stop": "stop",
    "max_tokens": "length",
    "model_length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
}
TOOL_CHOICES = {"auto": "auto", "any": "required", "none": "none"}


def message(raw: Any) -> trace.Message:
    """One Inspect chat message (``ChatMessageSystem``/``User``/``Assistant``/``Tool``)."""
    if not isinstance(raw, dict) or raw.get("role") not in ROLES:
        role = raw.get("role") if isinstance(raw, dict) else None
        raise RecordError("malformed_message", f"not an Inspect chat message (role {role!r})")
    role = raw["role"]
    result = trace.Message(role=role, content=content(raw.get("content")))
    if role == "assistant" and raw.get("tool_calls"):
        result.tool_calls = [tool_call(call) for call in raw["tool_calls"]]
    if role == "tool":
        result.tool_call_id = _text_or_none(raw.get("tool_call_id"))
        result.name = _text_or_none(raw.get("function"))
    return result


def content(raw: Any) -> str | list[trace.ContentPart] | None:
    """A message's content: text, or its parts with reasoning left out (a model's reasoning is
    its own, never part of what the next request sends as text)."""
    if raw is None or isinstance(raw, str):
        return raw
    if not isinstance(raw, list):
        raise RecordError("malformed_message", f"content is {type(raw).__name__}")
    parts = [_part(part) for part in raw if isinstance(part, dict)]
    return [part for part in parts if part is not None]


def _part(raw: dict[str, Any]) -> trace.ContentPart | None:
    kind = raw.get("type")
    if not isinstance(kind, str):
        raise RecordError("malformed_message", "a content part without a type")
    if kind == "reasoning":
        return None
    if kind == "text":
        return trace.ContentPart(type="text", text=_text_or_none(raw.get("text")))
    if kind == "image" and isinstance(raw.get("image"), str):
        image = {"url": raw["image"], "detail": raw.get("detail") or "auto"}
        return trace.ContentPart(type="image_url", image_url=image)
    return trace.ContentPart(**{key: value for key, value in raw.items() if key != "text"})


def tool_call(raw: Any) -> trace.ToolCall:
    """An assistant's call of a tool: ``{id, function, arguments}``."""
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), str):
        raise RecordError("malformed_tool_call", "a tool call without a function name")
    return trace.ToolCall.from_raw(
        raw["function"], raw.get("arguments"), _text_or_none(raw.get("id"))
    )


def tools(raw: Any) -> list[trace.ToolDef] | None:
    """The tools offered to the model (``ToolInfo``: name, description, parameters); None when
    the event does not record them."""
    if not isinstance(raw, list):
        return None
    return [
        trace.ToolDef(
            name=tool["name"],
            description=_text_or_none(tool.get("description")),
            parameters=tool.get("parameters") if isinstance(tool.get("parameters"), dict) else None,
        )
        for tool in raw
        if isinstance(tool, dict) and isinstance(tool.get("name"), str)
    ]


def tool_choice(raw: Any) -> Any:
    """Inspect's tool choice as chat completions names it (``any`` is ``required``, a named
    function is ``{"type": "function", "function": {"name": ...}}``)."""
    if isinstance(raw, str):
        return TOOL_CHOICES.get(raw, raw)
    if isinstance(raw, dict) and isinstance(raw.get("name"), str):
        return {"type": "function", "function": {"name": raw["name"]}}
    return None


def params(config: Any) -> dict[str, Any]:
    """The request parameters of a generation config, by their chat-completions names; a
    response schema becomes a ``json_schema`` response format."""
    if not isinstance(config, dict):
        return {}
    found = {
        wire: config[name] for name, wire in REQUEST_PARAMS.items() if config.get(name) is not None
    }
    schema = config.get("response_schema")
    if isinstance(schema, dict) and isinstance(schema.get("json_schema"), dict):
        found["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": schema.get("name"),
                "schema": schema["json_schema"],
                **({"strict": schema["strict"]} if schema.get("strict") is not None else {}),
            },
        }
    return found


def response(output: Any) -> trace.LLMResponse | None:
    """The first choice of a ``ModelOutput`` as the answer; None when the call gave none."""
    if not isinstance(output, dict):
        return None
    choices = output.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    first = choices[0]
    answer = message(first.get("message"))
    if answer.role != "assistant":
        raise RecordError("malformed_output", f"the answer's role is {answer.role!r}")
    return trace.LLMResponse(
        message=answer,
        finish_reason=FINISH_REASONS.get(first.get("stop_reason")),
        usage=usage(output.get("usage")),
        model=_text_or_none(output.get("model")),
    )


def usage(raw: Any) -> trace.Usage | None:
    """Token counts of a ``ModelUsage``."""
    if not isinstance(raw, dict):
        return None
    return trace.Usage(
        input_tokens=first_count(raw, "input_tokens"),
        output_tokens=first_count(raw, "output_tokens"),
        total_tokens=first_count(raw, "total_tokens"),
        cached_input_tokens=first_count(raw, "input_tokens_cache_read"),
        reasoning_tokens=first_count(raw, "reasoning_tokens"),
    )
