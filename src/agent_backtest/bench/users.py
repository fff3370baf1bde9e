"""The user side of an episode: a simulated user (the ``user`` role) or a scripted one.

A simulated user is a model told the case's instruction, as τ-bench does it: it speaks one
message at a time, as the customer, and writes the stop marker when its goal is met (or cannot
be). It sees the conversation from its side: the agent's words as the other party's, its own as
its own, and none of the agent's tool calls. The scripted user plays ``metadata.user_turns`` of
the case (or, without them, the instruction) one message per agent reply, then the stop marker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agent_backtest.bench.models import Case
from agent_backtest.providers import CallOutcome
from agent_backtest.redaction import redact
from agent_backtest.trace import LLMRequest, Message

SCRIPTED = "scripted"
GREETING = "Hi! How can I help you today?"
DEFAULT_STOP = "###STOP###"

USER_PROMPT = """You are a customer talking to a customer-service agent in a chat.

Your goal, and everything you know:
{instruction}

How to talk:
- Write only your next message to the agent, as the customer would: short and natural.
- Give the agent one piece of information at a time, when it is needed; do not give all of your \
goal at once, and do not make up anything that is not in your goal.
- You are the customer, never the agent: do not offer help, do not describe tools.
- When your goal is met, or the agent cannot meet it, write only {stop} and nothing else."""


class ModelCaller(Protocol):
    """How an episode's side asks its model: a ModelClient, or an executor's calls of it."""

    async def generate(self, request: LLMRequest, model: str, seed: int | None) -> CallOutcome:
        """The outcome of ``request`` on ``model`` (an answer, or a classified error)."""
        ...


class CallsLost(Exception):
    """No one is left to make the model calls (every Ray worker lost): the run stops, its
    episodes so far saved, to be resumed; never an episode's error."""


@dataclass(frozen=True)
class UserTurn:
    """What the user said next, or why it could not say anything (an engineering error)."""

    text: str | None
    error_kind: str | None = None
    error_detail: str | None = None


class User(Protocol):
    """The other party of an episode."""

    async def speak(self, agent_said: Sequence[str], user_said: Sequence[str]) -> UserTurn:
        """The next user message, given everything each side has said so far."""
        ...


@dataclass
class ModelUser:
    """A simulated user played by a model."""

    client: ModelCaller
    model: str
    instruction: str
    stop_marker: str
    seed: int | None = None
    params: dict[str, object] = field(default_factory=dict)

    async def speak(self, agent_said: Sequence[str], user_said: Sequence[str]) -> UserTurn:
        """Ask the model for the customer's next message."""
        prompt = USER_PROMPT.format(instruction=self.instruction, stop=self.stop_marker)
        messages = [Message(role="system", content=prompt)]
        heard = [GREETING, *agent_said]  # the agent spoke first, by the greeting
        for i, text in enumerate(heard):
            messages.append(Message(role="user", content=text))
            if i < len(user_said):
                messages.append(Message(role="assistant", content=user_said[i]))
        request = LLMRequest(messages=messages, tools=None, params=dict(self.params))
        try:
            outcome = await self.client.generate(request, self.model, self.seed)
        except CallsLost:
            raise
        except Exception as exc:  # a provider failing outside its classified errors
            return UserTurn(None, "error", redact(f"{type(exc).__name__}: {exc}")[:300])
        if outcome.error is not None:
            return UserTurn(None, outcome.error.kind, redact(outcome.error.detail))
        assert outcome.response is not None
        return UserTurn(outcome.response.message.text().strip())


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
