"""``bench_rescore()``: the rewards of recorded τ-bench trajectories, computed again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_backtest.bench.rescore import RescoredEpisode, Rescoring, rescore
from agent_backtest.statistics import Estimate

if TYPE_CHECKING:
    from agent_backtest.api.options import PathLike

__all__ = ["Estimate", "RescoredEpisode", "Rescoring", "bench_rescore"]


def bench_rescore(trajectories: PathLike, *, env: str) -> Rescoring:
    """Recompute the reward of every episode of a τ-bench trajectory file, with no model call.

    Each episode's executed tool calls run again on a fresh environment ``env`` (a shipped name
    such as ``tau_airline``, or ``module:Class``), and the episode is graded against the task
    its file embeds (final state and outputs); one that never ended gets 0, as in τ-bench. The
    environment is found before the file is read; nothing is written.
    """
    return rescore(trajectories, env)
