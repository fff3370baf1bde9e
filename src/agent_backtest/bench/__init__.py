"""Benchmarks: rollouts of an agent in a tool environment, graded against gold it never sees.

The pieces, each in its own module:

* :mod:`~agent_backtest.bench.models`: what a benchmark directory holds (manifest, public
  cases, hidden gold) and what a run records per episode (its outcome, then its grade);
* :mod:`~agent_backtest.bench.environment`: the protocol every tool environment follows;
* :mod:`~agent_backtest.reporting.passk`: pass^k and pass@k over cases, with intervals
  (shared with simulate's repeats);
* :mod:`~agent_backtest.bench.benchmark`: reading a benchmark directory and choosing cases;
  :mod:`~agent_backtest.bench.gold`: the only gold reader, used by grading alone;
* :mod:`~agent_backtest.bench.rollouts`: seeds, prompt groups and episode ids, and running
  episodes at once; :mod:`~agent_backtest.bench.episode`: one episode, with the user of
  :mod:`~agent_backtest.bench.users`, written as a session by :mod:`~agent_backtest.bench.traces`;
* :mod:`~agent_backtest.bench.grading`: graders by name and the reward;
  :mod:`~agent_backtest.bench.tally`: the run's figures;
* :mod:`~agent_backtest.bench.run`: a run from plan to grades (its checks in
  :mod:`~agent_backtest.bench.plan_checks`, run.json in :mod:`~agent_backtest.bench.run_manifest`,
  episodes.jsonl in :mod:`~agent_backtest.bench.run_files`).
"""
