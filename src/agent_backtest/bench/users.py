"""The user side of an episode: a simulated user (the ``user`` role) or a scripted one.

A simulated user is :class:`~agent_backtest.episodes.simulated_user.SimulatedUser` given the
case's instruction, as τ-bench does it; it hears the agent's greeting first. Its system prompt
is one of :data:`USER_PROMPTS`: abt's own, or τ-bench's user simulator prompt, so that a run's
figures can be set beside τ-bench's. The scripted user plays ``metadata.user_turns`` of the
case (or, without them, the instruction) one message per agent reply, then the stop marker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from typing import Protocol

from agent_backtest.bench.models import Case
from agent_backtest.episodes.calls import ModelCaller
from agent_backtest.episodes.simulated_user import (
    DEFAULT_STOP,
    SimulatedUser,
    UserBrief,
    UserTurn,
    user_instructions,
)
from agent_backtest.errors import UserError

__all__ = [
    "DEFAULT_STOP",
    "DEFAULT_USER_PROMPT",
    "GREETING",
    "SCRIPTED",
    "USER_PROMPTS",
    "ScriptedUser",
    "User",
    "UserModel",
    "UserPrompt",
    "model_user",
    "user_prompt",
]

SCRIPTED = "scripted"
GREETING = "Hi! How can I help you today?"


@dataclass(frozen=True)
class UserPrompt:
    """A simulated user's system prompt, by the name a run records."""

    name: str
    description: str
    """What the prompt is, for a run's label."""
    function: str
    """``module:function`` making the prompt from a brief, imported when a run uses it."""
    stop_marker: str | None = None
    """The stop marker the prompt's text names itself; None: the one the run's rules give."""

    def make(self) -> Callable[[UserBrief], str]:
        """The function making the prompt from a user's brief."""
        module, _, name = self.function.partition(":")
        return getattr(import_module(module), name)  # type: ignore[no-any-return]


USER_PROMPTS: Mapping[str, UserPrompt] = {
    "abt": UserPrompt(
        "abt",
        "abt's simulated user",
        "agent_backtest.episodes.simulated_user:user_instructions",
    ),
    "tau": UserPrompt(
        "tau",
        "τ-bench's user simulator prompt",
        "agent_backtest.bench.tau_airline.user_prompt:tau_user_prompt",
        stop_marker=DEFAULT_STOP,
    ),
}
DEFAULT_USER_PROMPT = "abt"


def user_prompt(name: str, stop_marker: str | None, parameter: str = "user_prompt") -> UserPrompt:
    """The user prompt called ``name``, checked to tell the user the run's stop marker."""
    prompt = USER_PROMPTS.get(name)
    if prompt is None:
        raise UserError(
            f"no user prompt {name!r}: give {' or '.join(sorted(USER_PROMPTS))}", parameter
        )
    if prompt.stop_marker is not None and prompt.stop_marker != stop_marker:
        raise UserError(
            f"the {name} user prompt tells the user to write {prompt.stop_marker}, but the "
            f"benchmark's stop marker is {stop_marker!r}: choose the abt user prompt",
            parameter,
        )
    return prompt


class User(Protocol):
    """The other party of an episode."""

    async def speak(self, agent_said: Sequence[str], user_said: Sequence[str]) -> UserTurn:
        """The next user message, given everything each side has said so far."""
        ...


@dataclass(frozen=True)
class UserModel:
    """The user role's model as every simulated user of a run asks it."""

    caller: ModelCaller
    model: str
    """The model's name at its provider, as sent."""
    prompt: Callable[[UserBrief], str] = user_instructions
    """The system prompt made from a case's brief (see :data:`USER_PROMPTS`)."""
    params: dict[str, object] = field(default_factory=dict)
    """The role's sampling parameters, sent with every request."""


def model_user(
    user: UserModel, instruction: str, stop_marker: str, seed: int | None
) -> SimulatedUser:
    """The simulated user of a case: its instruction, greeted by the agent first."""
    brief = UserBrief(instructions=instruction, stop_marker=stop_marker)
    return SimulatedUser(
        user.caller,
        user.model,
        brief,
        opening=GREETING,
        seed=seed,
        params=dict(user.params),
        prompt=user.prompt,
    )


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
