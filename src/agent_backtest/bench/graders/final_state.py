"""The final-state grader: did the episode leave the environment as the gold actions leave it?

The gold actions are run, in order, on a fresh environment reset to the case, and its state
hash compared with the one the episode ended with (or with ``gold.final_state_hash`` when the
gold gives it and no action). As in τ-bench, an action that only ends an episode (a transfer to
a human) is not run: it is part of a correct episode but changes nothing to compare.
"""

from __future__ import annotations

from agent_backtest.bench.graders import Component, GradingInput

__all__ = ["ENDING_ACTIONS", "expected_hash", "grade"]

ENDING_ACTIONS = frozenset({"transfer_to_human_agents"})
"""Gold actions left out of the replay, as τ-bench leaves out its environments' ending tools."""


def grade(input: GradingInput) -> Component:
    """1 when the episode's final state hash is the gold's, else 0; None with no state."""
    if input.record.state_hash is None:
        return Component(None, "the episode recorded no final state")
    expected = expected_hash(input)
    if input.record.state_hash == expected:
        return Component(1.0)
    return Component(
        0.0, f"final state {_short(input.record.state_hash)} is not the gold's {_short(expected)}"
    )


def expected_hash(input: GradingInput) -> str:
    """The state hash the gold actions lead to, from a fresh environment."""
    if input.gold.final_state_hash is not None and not input.gold.actions:
        return input.gold.final_state_hash
    environment = input.new_environment()
    environment.reset(input.case)
    for action in input.gold.actions:
        if action.name not in ENDING_ACTIONS:
            environment.call(action.name, action.arguments)
    return environment.state_hash()


def _short(state_hash: str) -> str:
    return state_hash.removeprefix("sha256:")[:12]
