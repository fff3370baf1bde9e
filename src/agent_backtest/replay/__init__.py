"""Replaying units on a candidate model."""

from agent_backtest.replay.engine import ReplayOutcome, result_record, run_jobs
from agent_backtest.replay.jobs import Job, candidate_for, candidates, iter_jobs

__all__ = [
    "Job",
    "ReplayOutcome",
    "candidate_for",
    "candidates",
    "iter_jobs",
    "result_record",
    "run_jobs",
]
