"""τ-bench's airline environment: a customer-service agent's tools over an airline database."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from agent_backtest.bench.environment import ToolOutcome
from agent_backtest.bench.models import Case
from agent_backtest.bench.tau_airline.database import Database
from agent_backtest.bench.tau_airline.tools import TERMINAL, definitions, run_tool

__all__ = ["AirlineEnvironment"]


class AirlineEnvironment:
    """The airline domain of τ-bench (Yao et al. 2024): 14 tools, the policy the agent follows,
    and a database every episode starts afresh from."""

    name = "tau_airline"

    def __init__(self) -> None:
        self._db = Database()
        self._done = False

    def reset(self, case: Case) -> None:
        """Start an episode from the shipped database; the case does not change it."""
        self._db = Database()
        self._done = False

    def tools(self) -> list[dict[str, Any]]:
        """The 14 tool definitions, in the OpenAI function format."""
        return definitions()

    def policy(self) -> str:
        """The airline's policy, the agent's system prompt."""
        return _policy()

    def call(self, tool: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        """Run one tool call; a transfer to a human agent ends the episode, answered or not."""
        outcome = run_tool(self._db, tool, arguments)
        if tool in TERMINAL:
            self._done = True
        return outcome

    def state_hash(self) -> str:
        """``sha256:<hex>`` of the canonical JSON of the database."""
        return self._db.state_hash()

    @property
    def done(self) -> bool:
        """Whether a transfer to a human agent ended the episode."""
        return self._done


@cache
def _policy() -> str:
    return (resources.files("agent_backtest.bench.tau_airline") / "data" / "policy.md").read_text()
