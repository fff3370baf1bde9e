"""What a caller of a replay is told while it goes: hooks called at its start, with each result
and at its end.

Kept apart from the engine so that code which only defines hooks (a command's progress display)
does not import the engine, its clients and asyncio.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_backtest.executors import ExecutorStatus
    from agent_backtest.replaying.run import ReplayResult
    from agent_backtest.runs import ResultRecord


@dataclass
class ReplayHooks:
    """What the caller sees while the run goes: a start count and each result."""

    on_start: Callable[[int, int], None] = lambda todo, done: None
    on_result: Callable[[ResultRecord], None] = lambda record: None
    on_finish: Callable[[ReplayResult], None] = lambda result: None
    on_progress: Callable[[ExecutorStatus], None] = lambda status: None
    """With each result: the calls in flight and each worker's answers so far."""
