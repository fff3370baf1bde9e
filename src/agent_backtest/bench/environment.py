"""The protocol of a tool environment: the world an agent's tool calls act on.

An environment is a Python class. A rollout makes one, calls :meth:`Environment.reset` with the
case, offers the agent :meth:`Environment.tools`, and runs each tool call the episode rules let
through with :meth:`Environment.call`. Grading makes a fresh one to compute the state the gold
actions lead to, and compares :meth:`Environment.state_hash` of the two. An environment never
sees the gold during a rollout: grading is the only code that hands it gold actions, and only
after every rollout has ended.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from agent_backtest.bench.models import Case

__all__ = ["Environment", "ToolOutcome"]


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool call returned to the agent.

    ``error`` marks an answer the tool gave as a refusal (an unknown id, a rule broken): the
    agent's mistake, shown to it as the tool's text, not an engineering failure. An environment
    that cannot run at all raises instead, and the episode ends as an engineering error.
    """

    output: str
    error: bool = False


@runtime_checkable
class Environment(Protocol):
    """A tool environment an episode runs in."""

    name: str
    """The name benchmarks use for it (``tau_airline``)."""

    def reset(self, case: Case) -> None:
        """Start an episode of ``case`` from the environment's initial state."""
        ...

    def tools(self) -> list[dict[str, Any]]:
        """The tools offered to the agent, in the OpenAI function format."""
        ...

    def policy(self) -> str | None:
        """The instructions the agent is given as its system prompt, if the environment has any."""
        ...

    def call(self, tool: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        """Run one tool call on the current state and return what the agent sees."""
        ...

    def state_hash(self) -> str:
        """A hash of the current state: equal states, equal hashes, across processes."""
        ...

    @property
    def done(self) -> bool:
        """Whether a tool call ended the episode (a transfer to a human, say)."""
        ...
