"""What the readers of whole agent runs (evaluation logs, trajectories, benchmark results) build
the same way: a tool step from a tool's execution, and text values read from loose JSON."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agent_backtest import trace


def tool_step(
    step_id: str,
    execution: trace.ToolExecution,
    started_at: datetime | None = None,
    ended_at: datetime | None = None,
) -> trace.Step:
    """The step of one tool execution, failed when the execution recorded an error."""
    return trace.Step(
        id=step_id,
        kind="tool",
        name=execution.name,
        started_at=started_at,
        ended_at=ended_at,
        status="error" if execution.error else "ok",
        error=execution.error,
        tool=execution,
    )


def text_or_none(value: Any) -> str | None:
    """``value`` when it is a string; anything else was not recorded as text."""
    return value if isinstance(value, str) else None
