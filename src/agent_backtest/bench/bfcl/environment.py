"""The environment of a BFCL question: its functions offered, no function run.

BFCL's single-turn categories grade the calls a model makes, not what the functions would
return, so a call here is recorded and answered with a note that nothing ran, and the first
agent turn that calls a function ends the episode (all of that turn's calls are run through
here first, parallel calls being what some categories test).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

from agent_backtest.bench.bfcl.tools import openai_tools
from agent_backtest.bench.environment import ToolOutcome
from agent_backtest.bench.models import Case

__all__ = ["BfclEnvironment"]

NOT_RUN = "recorded; this benchmark grades the call and runs no function"


class BfclEnvironment:
    """One BFCL question's functions; the calls made are its whole state."""

    name = "bfcl"

    def __init__(self) -> None:
        self._tools: list[dict[str, Any]] = []
        self._calls: list[tuple[str, Any]] = []

    def reset(self, case: Case) -> None:
        """Offer the question's functions; no call made yet."""
        self._tools = openai_tools(case.metadata.get("functions", []))
        self._calls = []

    def tools(self) -> list[dict[str, Any]]:
        """The question's functions as OpenAI tools."""
        return self._tools

    def policy(self) -> str | None:
        """BFCL gives a model with native tools no system prompt."""
        return None

    def call(self, tool: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        """Record the call; nothing runs."""
        self._calls.append((tool, dict(arguments)))
        offered = {t["function"]["name"] for t in self._tools}
        if tool not in offered:
            return ToolOutcome(f"unknown function {tool}", error=True)
        return ToolOutcome(NOT_RUN)

    def state_hash(self) -> str:
        """A hash of the calls made, in order."""
        return hashlib.sha256(orjson.dumps(self._calls, option=orjson.OPT_SORT_KEYS)).hexdigest()

    @property
    def done(self) -> bool:
        """A question is answered by its first turn of calls."""
        return bool(self._calls)
