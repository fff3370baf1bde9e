"""The final-state grader: did the episode leave the environment as the gold actions leave it?

The gold actions are run, in order, on a fresh environment reset to the case, and its state
hash compared with the one the episode ended with (or ``gold.final_state_hash``, when the gold
gives it, is the expected hash). As in τ-bench, an action that only ends an episode (a transfer to
a human) is not run: it is part of a correct episode but changes nothing to compare.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_backtest.bench.environment import Environment
from agent_backtest.bench.graders import Component, GradingInput
from agent_backtest.bench.models import Case, Gold

__all__ = ["ENDING_ACTIONS", "expected_hash", "grade", "judge"]

ENDING_ACTIONS = frozenset({"transfer_to_human_agents"})
"""Gold actions left out of the replay, as τ-bench leaves out its environments' ending tools."""


def grade(input: GradingInput) -> Component:
    """1 when the episode's final state hash is the gold's, else 0; None with no state."""
    return judge(input.record.state_hash, input.case, input.gold, input.new_environment)


def judge(
    state_hash: str | None, case: Case, gold: Gold, new_environment: Callable[[], Environment]
) -> Component:
    """The grade of an episode that ended in ``state_hash``."""
    if state_hash is None:
        return Component(None, "the episode recorded no final state")
    expected = expected_hash(case, gold, new_environment)
    if state_hash == expected:
        return Component(1.0)
    return Component(0.0, f"final state {_short(state_hash)} is not the gold's {_short(expected)}")


def expected_hash(case: Case, gold: Gold, new_environment: Callable[[], Environment]) -> str:
    """The state hash the gold leads to: the one it gives, else its actions' on a fresh
    environment."""
    if gold.final_state_hash is not None:
        return gold.final_state_hash
    environment = new_environment()
    environment.reset(case)
    for action in gold.actions:
        if action.name not in ENDING_ACTIONS:
            environment.call(action.name, action.arguments)
    return environment.state_hash()


def _short(state_hash: str) -> str:
    return state_hash.removeprefix("sha256:")[:12]
