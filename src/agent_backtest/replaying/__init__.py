"""Replaying units on a candidate model."""

from agent_backtest.replaying.engine import ReplayOutcome, result_record, run_jobs
from agent_backtest.replaying.jobs import Job, candidate_for, iter_jobs, model_of

__all__ = [
    "Job",
    "ReplayOutcome",
    "candidate_for",
    "iter_jobs",
    "model_of",
    "result_record",
    "run_jobs",
]
