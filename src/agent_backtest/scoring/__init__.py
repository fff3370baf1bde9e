"""Scoring candidate answers against production's: matcher, judge, buckets and statistics.

Scoring reads what replay wrote (the run directory) and never imports the replay engine.
"""

from agent_backtest.scoring.buckets import SCORER, Scorer, answer_signature
from agent_backtest.scoring.run import ScoreOutcome, ScoreSettings, score_run
from agent_backtest.scoring.summary import summarise
from agent_backtest.statistics import Estimate, clustered_mean, paired_difference

__all__ = [
    "SCORER",
    "Estimate",
    "ScoreOutcome",
    "ScoreSettings",
    "Scorer",
    "answer_signature",
    "clustered_mean",
    "paired_difference",
    "score_run",
    "summarise",
]
