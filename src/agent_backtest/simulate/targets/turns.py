"""One turn's answer as a target gives it, and the turn record assembled from its events."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agent_backtest.simulate.models import ModelCall, ToolActivity, TurnRecord
from agent_backtest.simulate.targets.events import TurnEvent
from agent_backtest.simulate.turn_errors import AGENT_ERROR_PREFIX

DEFAULT_RESULT_CHARS = 2000
"""Characters of a tool result kept in a turn record (its full length is recorded too)."""


@dataclass
class TargetAnswer:
    """What the agent did in one turn: its events, time to the first streamed event, turn time,
    and the model calls it made when they are visible (the built-in agent loop's)."""

    events: list[TurnEvent]
    ttft_ms: float | None
    turn_ms: float
    model_calls: list[ModelCall] = field(default_factory=list)
    traceparent: str | None = None
    """The W3C trace context the turn's request carried, when the target sends one."""


def assemble_turn(
    index: int, user: str, answer: TargetAnswer, result_chars: int = DEFAULT_RESULT_CHARS
) -> TurnRecord:
    """The turn record of ``answer``: text deltas joined unless a final text was given, each
    tool result paired with its call (by id, else the latest call of that name)."""
    deltas: list[str] = []
    final: str | None = None
    calls: list[ToolActivity] = []
    by_id: dict[str, ToolActivity] = {}
    errors: list[str] = []
    record = TurnRecord(
        index=index,
        user=user,
        ttft_ms=answer.ttft_ms,
        turn_ms=answer.turn_ms,
        model_calls=answer.model_calls,
        traceparent=answer.traceparent,
    )
    for event in answer.events:
        if event.kind == "text_delta" and event.text:
            deltas.append(event.text)
        elif event.kind == "final_text" and event.text is not None:
            final = event.text
        elif event.kind == "tool_start":
            activity = ToolActivity(
                name=event.name or "?",
                call_id=event.call_id,
                arguments=_arguments(event.arguments),
            )
            calls.append(activity)
            if event.call_id is not None:
                by_id[event.call_id] = activity
        elif event.kind == "tool_result":
            _attach(_call_for(event, calls, by_id), event, result_chars)
        elif event.kind == "error":
            errors.append(event.message or "the agent reported an error")
        elif event.kind == "usage":
            record.input_tokens = _last(event.input_tokens, record.input_tokens)
            record.output_tokens = _last(event.output_tokens, record.output_tokens)
        elif event.kind == "tools_offered":
            record.tools_offered = event.tools
    record.tool_calls = calls
    record.final_text = final if final is not None else ("".join(deltas) if deltas else None)
    record.error = AGENT_ERROR_PREFIX + "; ".join(errors) if errors else None
    return record


def _call_for(
    event: TurnEvent, calls: list[ToolActivity], by_id: dict[str, ToolActivity]
) -> ToolActivity:
    """The call a result answers; a result of no known call is recorded as its own."""
    if event.call_id is not None and event.call_id in by_id:
        return by_id[event.call_id]
    for activity in reversed(calls):
        if activity.name == event.name and activity.result is None and activity.error is None:
            return activity
    activity = ToolActivity(name=event.name or "?", arguments=_arguments(event.arguments))
    calls.append(activity)
    return activity


def _attach(activity: ToolActivity, event: TurnEvent, result_chars: int) -> None:
    if event.result is not None:
        text = event.result if isinstance(event.result, str) else _dumps(event.result)
        activity.result = text[:result_chars]
        activity.result_length = len(text)
    if event.message:
        activity.error = event.message


def _arguments(value: Any) -> dict | str | None:
    """Arguments parsed when they are a JSON object; the raw string otherwise."""
    if value is None or isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        return parsed if isinstance(parsed, dict) else value
    return _dumps(value)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _last(new: int | None, old: int | None) -> int | None:
    """A count the agent reported again replaces the earlier one; none reported keeps it."""
    return new if new is not None else old
