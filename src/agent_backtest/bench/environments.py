"""Which class an environment name stands for: the shipped ones, or ``module:Class``."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from agent_backtest.bench.environment import Environment
from agent_backtest.errors import UserError

__all__ = ["SHIPPED", "environment_factory"]

# The environments that come with abt, each imported only when a run names it.
SHIPPED: dict[str, str] = {
    "bfcl": "agent_backtest.bench.bfcl:BfclEnvironment",
    "tau_airline": "agent_backtest.bench.tau_airline:AirlineEnvironment",
}


def environment_factory(name: str, parameter: str = "environment") -> Callable[[], Environment]:
    """A function making fresh environments of ``name``: a shipped name or ``module:Class``."""
    target = SHIPPED.get(name, name)
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise UserError(
            f"unknown environment {name!r}: name one of {', '.join(sorted(SHIPPED))}, "
            "or give your own as module:Class",
            parameter,
        )
    try:
        found = getattr(import_module(module_name), attribute)
    except ImportError as exc:
        raise UserError(
            f"environment {name!r}: cannot import {module_name}: {exc}", parameter
        ) from None
    except AttributeError:
        raise UserError(
            f"environment {name!r}: {module_name} has no {attribute}", parameter
        ) from None
    if not callable(found):
        raise UserError(f"environment {name!r}: {target} is not a class", parameter)
    return found
