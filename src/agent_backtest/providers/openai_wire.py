"""Canonical requests in the OpenAI chat-completions wire format.

The request goes out as production recorded it; only what the target cannot take is removed,
and each removal is returned so the run can record it.
"""

from __future__ import annotations

from typing import Any

import orjson

from agent_backtest.trace import LLMRequest, Message, ToolCall, ToolDef


def chat_payload(
    request: LLMRequest,
    model: str,
    seed: int | None,
    drop_schema_keys: list[str] | None = None,
    drop_params: list[str] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The ``/chat/completions`` body for ``request`` sent to ``model``, and the adjustments."""
    adjustments: list[str] = []
    payload: dict[str, Any] = {
        "model": model,
        "messages": [message_to_wire(m) for m in request.messages],
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
        if key in (drop_params or []):
            adjustments.append(f"removed parameter {key} (config drop_params)")
        elif key != "seed":
            payload[key] = value
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
