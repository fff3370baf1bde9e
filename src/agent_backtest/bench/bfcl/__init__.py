"""BFCL as a benchmark: the Berkeley Function Calling Leaderboard's single-turn categories.

The questions and their possible answers come from the installed ``bfcl-eval`` package (``pip
install --no-deps bfcl-eval``; nothing of BFCL ships with abt). :func:`write_benchmark` turns
them into a benchmark directory: each question a case whose opening messages are the question
and whose offered tools are its functions (``metadata.functions``), each possible answer a gold
line whose actions carry the answer key the scoring matcher checks. The environment runs no
function: BFCL grades the calls a model makes to them, not what they would return.
"""

from agent_backtest.bench.bfcl.benchmark import CATEGORIES, cached_benchmark, write_benchmark
from agent_backtest.bench.bfcl.environment import BfclEnvironment

__all__ = ["CATEGORIES", "BfclEnvironment", "cached_benchmark", "write_benchmark"]
