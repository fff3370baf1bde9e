"""Replaying units on a candidate model.

Each public name is imported from its module on first use: a command that only defines hooks
(``replaying.events``) does not load the engine and its clients.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_backtest.exports import lazy_exports

if TYPE_CHECKING:
    from agent_backtest.replaying.engine import ReplayOutcome, result_record, run_jobs
    from agent_backtest.replaying.jobs import Job, candidate_for, iter_jobs, model_of

# Each public name and the module that defines it.
_HOMES = {
    "Job": "agent_backtest.replaying.jobs",
    "ReplayOutcome": "agent_backtest.replaying.engine",
    "candidate_for": "agent_backtest.replaying.jobs",
    "iter_jobs": "agent_backtest.replaying.jobs",
    "model_of": "agent_backtest.replaying.jobs",
    "result_record": "agent_backtest.replaying.engine",
    "run_jobs": "agent_backtest.replaying.engine",
}
__all__ = [
    "Job",
    "ReplayOutcome",
    "candidate_for",
    "iter_jobs",
    "model_of",
    "result_record",
    "run_jobs",
]

__getattr__ = lazy_exports(_HOMES, globals())
