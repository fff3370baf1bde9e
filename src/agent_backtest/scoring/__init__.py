"""Scoring candidate answers against production's: matcher, judge, buckets and statistics.

Scoring reads what replay wrote (the run directory) and never imports the replay engine.
"""

from agent_backtest.scoring.buckets import SCORER, Scorer, answer_signature
from agent_backtest.scoring.run import ScoreOutcome, ScoreSettings, score_run
from agent_backtest.scoring.summary import summarise

__all__ = [
    "SCORER",
    "ScoreOutcome",
    "ScoreSettings",
    "Scorer",
    "answer_signature",
    "score_run",
    "summarise",
]
