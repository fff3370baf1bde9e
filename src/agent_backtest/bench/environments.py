"""Which class an environment name stands for: a shipped one, an installed package's, or
``module:Class``."""

from __future__ import annotations

from collections.abc import Callable

from agent_backtest.bench.environment import Environment
from agent_backtest.registry import Registry

__all__ = ["ENVIRONMENTS", "environment_factory"]

# The environments that come with abt, each imported only when a run names it; installed
# packages add theirs under the entry point group agent_backtest.environments.
ENVIRONMENTS = Registry(
    "agent_backtest.environments",
    "environment",
    {
        "bfcl": "agent_backtest.bench.bfcl:BfclEnvironment",
        "tau_airline": "agent_backtest.bench.tau_airline:AirlineEnvironment",
    },
    "give your own as module:Class",
    contract=("__call__",),
    references=True,
)


def environment_factory(name: str, parameter: str = "environment") -> Callable[[], Environment]:
    """A function making fresh environments of ``name``: a shipped or installed name, or
    ``module:Class``."""
    return ENVIRONMENTS.load(name, parameter)
