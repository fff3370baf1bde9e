"""What a target reports of one turn: a stream of events in one vocabulary for every target.

An HTTP agent's JSON answer, its server-sent events and a Python callable's return value are
all turned into :class:`TurnEvent` values; the conversation assembles them into a turn record.
A value is found in an event's JSON by a dotted path (``usage.input_tokens``, ``items.0.name``):
answer shapes seen in agent APIs nest a few named levels, which a full JSONPath language would
only make harder to validate, so a few lines here do it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ConfigDict

from agent_backtest.record_model import StrictModel

EventKind = Literal[
    "text_delta", "final_text", "tool_start", "tool_result", "error", "usage", "tools_offered"
]
EVENT_KINDS: tuple[str, ...] = EventKind.__args__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class TurnEvent:
    """One thing the agent reported during a turn; fields the kind does not use stay None."""

    kind: EventKind
    text: str | None = None
    name: str | None = None
    arguments: Any = None
    call_id: str | None = None
    result: Any = None
    message: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    tools: list[str] | None = None


class EventPaths(StrictModel):
    """Where each field of an event sits in its JSON; an empty path is the value itself.

    The target file gives them (unknown keys refused, as everywhere in it).
    """

    model_config = ConfigDict(frozen=True)

    text: str = "text"
    name: str = "name"
    arguments: str = "arguments"
    id: str = "id"
    result: str = "result"
    message: str = "message"
    input_tokens: str = "input_tokens"
    output_tokens: str = "output_tokens"
    tools: str = "tools"


class Missing:
    """No value at a path (distinct from a JSON null)."""


MISSING = Missing()


def at_path(value: Any, path: str) -> Any:
    """The value at a dotted ``path`` of ``value`` (list items by index), or ``MISSING``."""
    if not path:
        return value
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def event_from(kind: EventKind, data: Any, paths: EventPaths) -> TurnEvent:
    """The event of ``kind`` whose fields are read from ``data`` at ``paths``."""

    def get(path: str) -> Any:
        found = at_path(data, path)
        return None if found is MISSING else found

    if kind in ("text_delta", "final_text"):
        return TurnEvent(kind, text=_text(get(paths.text)))
    if kind in ("tool_start", "tool_result"):
        call_id = get(paths.id)
        return TurnEvent(
            kind,
            name=_text(get(paths.name)),
            arguments=get(paths.arguments),
            call_id=str(call_id) if call_id is not None else None,
            result=get(paths.result),
            message=_text(get(paths.message)),
        )
    if kind == "error":
        return TurnEvent(kind, message=_text(get(paths.message)) or _text(data))
    if kind == "usage":
        return TurnEvent(
            kind,
            input_tokens=_count(get(paths.input_tokens)),
            output_tokens=_count(get(paths.output_tokens)),
        )
    tools = get(paths.tools)
    names = [_tool_name(tool) for tool in tools] if isinstance(tools, list) else None
    return TurnEvent(kind, tools=[name for name in names if name] if names else names)


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return str(value)


def _count(value: Any) -> int | None:
    """A token count as reported; anything that is not a whole number is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _tool_name(tool: Any) -> str | None:
    """A tool offered: its name, or the name of an OpenAI-style definition."""
    if isinstance(tool, str):
        return tool
    if isinstance(tool, dict):
        name = tool.get("name") or (tool.get("function") or {}).get("name")
        return name if isinstance(name, str) else None
    return None
