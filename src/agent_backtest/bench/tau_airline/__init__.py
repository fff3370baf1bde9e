"""τ-bench's airline domain: the environment, and its 50 test tasks as a benchmark.

* :mod:`~agent_backtest.bench.tau_airline.environment`: :class:`AirlineEnvironment`;
* :mod:`~agent_backtest.bench.tau_airline.database`: the shipped database and an episode's
  changes to it, with the state hash;
* :mod:`~agent_backtest.bench.tau_airline.lookups` and
  :mod:`~agent_backtest.bench.tau_airline.changes`: the tools that read and the ones that write;
* ``data/``: the database, policy and tool definitions; ``benchmark/``: the benchmark directory
  of the test split. ``PROVENANCE.md`` says where each comes from (MIT).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from agent_backtest.bench.tau_airline.environment import AirlineEnvironment

__all__ = ["AirlineEnvironment", "benchmark_directory"]


def benchmark_directory() -> Path:
    """The shipped benchmark directory of τ-bench's 50 airline test tasks."""
    return Path(str(resources.files("agent_backtest.bench.tau_airline") / "benchmark"))
