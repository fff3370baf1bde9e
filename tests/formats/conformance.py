"""The fields of a unit that the conformance corpus checks, as plain data.

An expected-units file holds, per sample, what each unit must say: the model, the system prompt,
the user turns, the tool calls in the history with their arguments, the tool results with the
call ids they answer, the tools offered, the usage and the answer; and what the readers could not
use, by reason. It is written by hand from the trace (and checked against the backend's own
normalisation where one exists), never generated from the reader's output.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from agent_backtest.api import ReadingOptions
from agent_backtest.units import AgentConfig, Unit
from agent_backtest.units.source import UnitSource


def unit_fields(unit: Unit) -> dict[str, Any]:
    """The checked fields of one unit."""
    request, golden = unit.request, unit.golden
    messages = request.messages
    usage = golden.usage.model_dump(exclude_none=True) if golden.usage else None
    return {
        "model": request.model,
        "system": [m.text() for m in messages if m.role in ("system", "developer")],
        "user": [m.text() for m in messages if m.role == "user"],
        "history_calls": [
            [call.name, call.arguments] for m in messages for call in m.tool_calls or []
        ],
        "tool_results": [[m.tool_call_id, m.text()] for m in messages if m.role == "tool"],
        "tools": None if request.tools is None else [tool.name for tool in request.tools],
        "usage": usage,
        "answer_text": golden.message.text() or None,
        "answer_calls": [[c.name, c.arguments] for c in golden.message.tool_calls or []],
        "finish_reason": golden.finish_reason,
    }


def read_sample(path: Path) -> dict[str, Any]:
    """What the readers make of one sample: its units' fields, and the steps and records left
    out, by reason."""
    source = UnitSource([path], ReadingOptions().read_options(), AgentConfig())
    units = [unit_fields(unit) for unit in source]
    skipped = source.skipped_steps() + source.skipped_records()
    return {"units": units, "skipped": dict(sorted(Counter(skipped).items()))}
