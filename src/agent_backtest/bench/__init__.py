"""Benchmarks: rollouts of an agent in a tool environment, graded against gold it never sees.

The pieces, each in its own module:

* :mod:`~agent_backtest.bench.models`: what a benchmark directory holds (manifest, public
  cases, hidden gold) and what a run records per episode (its outcome, then its grade);
* :mod:`~agent_backtest.bench.environment`: the protocol every tool environment follows;
* :mod:`~agent_backtest.bench.passk`: pass^k and pass@k over cases, with intervals.
"""
