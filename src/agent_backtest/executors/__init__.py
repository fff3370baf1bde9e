"""Where every job's model calls are made: here, or on a Ray cluster.

An engine hands each call to an :class:`Executor` and writes the record itself: the driver is
the single writer of the run directory and the cache, whichever executor calls. Replay's jobs,
bench's episodes and simulate's conversations (agent and user) go through the same executors.
Ray is imported only when a Ray executor is opened.
"""

from __future__ import annotations

from agent_backtest.executors.executor import (
    Call,
    Executor,
    ExecutorKind,
    ExecutorStatus,
    LocalExecutor,
    ModelCall,
    WorkersLost,
    check_executor,
    open_executor,
)
from agent_backtest.executors.role_calls import ExecutorCaller, RoleCalls, role_calls

__all__ = [
    "Call",
    "Executor",
    "ExecutorCaller",
    "ExecutorKind",
    "ExecutorStatus",
    "LocalExecutor",
    "ModelCall",
    "RoleCalls",
    "WorkersLost",
    "check_executor",
    "open_executor",
    "role_calls",
]
