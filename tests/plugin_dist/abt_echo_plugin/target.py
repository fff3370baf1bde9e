"""The ``echo`` target type of ``abt simulate``: an agent that says each user message back.

Its target file::

    name = "parrot"
    type = "echo"
    prefix = "you said: "
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from agent_backtest.simulate.targets import (
    AgentFactory,
    AgentRole,
    TargetAnswer,
    TargetBase,
    TargetType,
    TurnEvent,
)


class EchoTarget(TargetBase):
    """The target file of an echo agent."""

    type: Literal["echo"]
    prefix: str = ""


class EchoAgent:
    """The echo agent, shared by every conversation of a run."""

    secrets: tuple[str, ...] = ()

    def __init__(self, target: EchoTarget) -> None:
        self.target = target

    async def start(self, models: Mapping[str, Any]) -> None:
        """Nothing to set up (the echo agent calls no model)."""

    async def open(self, flow_id: str) -> EchoConversation:
        """A conversation."""
        return EchoConversation(self.target.prefix)

    async def aclose(self) -> None:
        """Nothing to release."""


class EchoConversation:
    """One conversation: each turn's answer is the user's message, prefixed."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    async def turn(self, index: int, message: str, history: list[dict[str, str]]) -> TargetAnswer:
        """The message said back."""
        started = time.perf_counter()
        event = TurnEvent("final_text", text=self.prefix + message)
        return TargetAnswer([event], None, (time.perf_counter() - started) * 1000)

    async def close(self) -> None:
        """Nothing to close."""


def prepare(target: EchoTarget, file: Path, agent: AgentRole) -> AgentFactory:
    """What opens the echo agent (there is nothing to check)."""
    return lambda: EchoAgent(target)


ECHO = TargetType(EchoTarget, prepare)
