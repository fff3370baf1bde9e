"""Which class an environment name stands for: the shipped ones, or ``module:Class``."""

from __future__ import annotations

from collections.abc import Callable

from agent_backtest.bench.environment import Environment
from agent_backtest.errors import UserError
from agent_backtest.plugins import load_object

__all__ = ["SHIPPED", "environment_factory"]

# The environments that come with abt, each imported only when a run names it.
SHIPPED: dict[str, str] = {
    "bfcl": "agent_backtest.bench.bfcl:BfclEnvironment",
    "tau_airline": "agent_backtest.bench.tau_airline:AirlineEnvironment",
}


def environment_factory(name: str, parameter: str = "environment") -> Callable[[], Environment]:
    """A function making fresh environments of ``name``: a shipped name or ``module:Class``."""
    target = SHIPPED.get(name, name)
    if ":" not in target:
        raise UserError(
            f"unknown environment {name!r}: name one of {', '.join(sorted(SHIPPED))}, "
            "or give your own as module:Class",
            parameter,
        )
    return load_object(target, f"environment {name!r}", parameter)
