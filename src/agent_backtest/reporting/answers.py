"""An assistant answer as plain data: its text and its tool calls (name and arguments).

Shared by the CSV export and the HTML report so that both show an answer the same way.
"""

from __future__ import annotations

from typing import Any

from agent_backtest.trace import Message, ToolCall, canonical_json


def call_arguments(call: ToolCall) -> Any:
    """The call's parsed arguments, or the raw string the model sent when it was not JSON."""
    if call.arguments is None and call.arguments_raw is not None:
        return call.arguments_raw
    return call.arguments


def answer_data(message: Message | None) -> dict[str, Any] | None:
    """``{"text", "calls": [{"name", "args"}]}`` of an answer; None when there is none."""
    if message is None:
        return None
    calls = [{"name": c.name, "args": call_arguments(c)} for c in message.tool_calls or []]
    return {"text": message.text(), "calls": calls}


def tool_names(message: Message | None) -> str:
    """The tools an answer calls, joined by ``;`` (empty for a text answer)."""
    if message is None:
        return ""
    return ";".join(call.name for call in message.tool_calls or [])


def arguments_json(message: Message | None) -> str:
    """The answer's arguments as canonical JSON: one call's object, or a list for several."""
    calls = (message.tool_calls or []) if message is not None else []
    if not calls:
        return ""
    values = [call_arguments(call) for call in calls]
    return canonical_json(values[0] if len(values) == 1 else values).decode()
