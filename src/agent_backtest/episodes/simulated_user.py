"""The simulated user: the ``user`` role's model playing a person who talks to the agent.

It is told who it is and what it wants (the instructions), what it may tell when asked and
what it does not know (never to be invented), and the stop marker to write, alone, once its
goal is met or cannot be. It speaks one message at a time and sees the conversation from its
own side: the agent's words as the other party's (``user``), its own as its own
(``assistant``), none of the agent's tool calls. The conversation it sees opens with a line of
the other side: the agent's greeting in a bench episode, a note that the conversation starts in
a simulate flow. Simulate's flows and bench's cases both play through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agent_backtest.episodes.calls import CallsLost, ModelCaller, describe_failure
from agent_backtest.redaction import redact
from agent_backtest.trace import LLMRequest, Message

DEFAULT_STOP = "###STOP###"
OPENING = "(The conversation starts: write your first message to the assistant.)"


@dataclass(frozen=True)
class UserBrief:
    """Who the simulated user is: what it wants, knows and does not know, and how it stops."""

    instructions: str
    known_info: str | None = None
    unknown_info: str | None = None
    stop_marker: str = DEFAULT_STOP


@dataclass(frozen=True)
class UserTurn:
    """What the user said next, or why it could not say anything (an engineering error)."""

    text: str | None
    error_kind: str | None = None
    error_detail: str | None = None


def user_instructions(brief: UserBrief) -> str:
    """The simulated user's system prompt."""
    parts = [
        "You play a person talking to an AI assistant in a chat. Write only your next message "
        "to it, as that person would: short and natural, one message at a time. You are never "
        "the assistant: do not offer help and do not describe tools.",
        f"Who you are and what you want:\n{brief.instructions}",
        "Give the assistant one piece of information at a time, when it asks or needs it; do "
        "not state your whole goal at once, and never make up anything you were not given.",
    ]
    if brief.known_info:
        parts.append(f"What you know and may tell when asked: {brief.known_info}")
    if brief.unknown_info:
        parts.append(f"What you do not know (say so; never invent it): {brief.unknown_info}")
    parts.append(
        f"When your goal is met, or the assistant cannot meet it, reply with {brief.stop_marker} "
        "alone."
    )
    return "\n\n".join(parts)


@dataclass
class SimulatedUser:
    """A user played by a model from its brief."""

    caller: ModelCaller
    model: str
    """The model's name at its provider, as sent."""
    brief: UserBrief
    opening: str = OPENING
    """The other side's first line, as the simulated user hears it."""
    seed: int | None = 0
    params: dict[str, object] = field(default_factory=dict)
    prompt: Callable[[UserBrief], str] = user_instructions
    """The system prompt made from the brief: abt's own, or a benchmark's (τ-bench's user)."""

    def request(self, agent_said: Sequence[str], user_said: Sequence[str]) -> LLMRequest:
        """The question for the next message: the opening and each exchange, flipped."""
        messages = [Message(role="system", content=self.prompt(self.brief))]
        heard = [self.opening, *agent_said]
        for i, text in enumerate(heard):
            messages.append(Message(role="user", content=text))
            if i < len(user_said):
                messages.append(Message(role="assistant", content=user_said[i]))
        return LLMRequest(messages=messages, tools=None, params=dict(self.params))

    async def speak(self, agent_said: Sequence[str], user_said: Sequence[str]) -> UserTurn:
        """The user's next message, given what each side has said so far; a failed call is
        the turn's error (its kind and detail), never an exception but :class:`CallsLost`."""
        request = self.request(agent_said, user_said)
        try:
            outcome = await self.caller.generate(request, self.model, self.seed)
        except CallsLost:
            raise
        except Exception as exc:  # a provider failing outside its classified errors
            return UserTurn(None, "error", describe_failure(exc))
        if outcome.error is not None:
            return UserTurn(None, outcome.error.kind, redact(outcome.error.detail))
        if outcome.response is None:
            return UserTurn(None, "no_answer", "the user role gave no answer")
        return UserTurn(outcome.response.message.text().strip())

    def stops(self, text: str) -> bool:
        """Whether ``text`` ends the conversation (it holds the stop marker)."""
        return self.brief.stop_marker in text
