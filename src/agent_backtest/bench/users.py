"""The user side of an episode: a simulated user (the ``user`` role) or a scripted one.

A simulated user is :class:`~agent_backtest.episodes.simulated_user.SimulatedUser` given the
case's instruction, as τ-bench does it; it hears the agent's greeting first. The scripted user
plays ``metadata.user_turns`` of the case (or, without them, the instruction) one message per
agent reply, then the stop marker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from agent_backtest.bench.models import Case
from agent_backtest.episodes.calls import ModelCaller
from agent_backtest.episodes.simulated_user import DEFAULT_STOP, SimulatedUser, UserBrief, UserTurn

__all__ = ["DEFAULT_STOP", "GREETING", "SCRIPTED", "ScriptedUser", "User", "model_user"]

SCRIPTED = "scripted"
GREETING = "Hi! How can I help you today?"


class User(Protocol):
    """The other party of an episode."""

    async def speak(self, agent_said: Sequence[str], user_said: Sequence[str]) -> UserTurn:
        """The next user message, given everything each side has said so far."""
        ...


def model_user(
    caller: ModelCaller, model: str, instruction: str, stop_marker: str, seed: int | None
) -> SimulatedUser:
    """The simulated user of a case: its instruction, greeted by the agent first."""
    brief = UserBrief(instructions=instruction, stop_marker=stop_marker)
    return SimulatedUser(caller, model, brief, opening=GREETING, seed=seed)


@dataclass
class ScriptedUser:
    """A user that says its turns in order, one per agent reply, then the stop marker."""

    turns: list[str]
    stop_marker: str

    @classmethod
    def of(cls, case: Case, stop_marker: str) -> ScriptedUser:
        """The script of a case: ``metadata.user_turns``, else its instruction."""
        turns = case.metadata.get("user_turns")
        if not (isinstance(turns, list) and all(isinstance(t, str) for t in turns) and turns):
            turns = [case.instruction] if case.instruction else []
        return cls(list(turns), stop_marker)

    async def speak(self, agent_said: Sequence[str], user_said: Sequence[str]) -> UserTurn:
        """The next line of the script, or the stop marker once it is all said."""
        said = len(user_said)
        return UserTurn(self.turns[said] if said < len(self.turns) else self.stop_marker)
