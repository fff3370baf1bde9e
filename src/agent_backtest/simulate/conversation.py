"""Playing one flow through the target: its scripted turns, or a simulated user's.

A simulated user is the ``user`` role given the flow's instructions, what it knows and what it
does not; it writes each next message from the conversation so far (its own messages as the
assistant's, the agent's answers as the user's, as a user simulator sees them) and ends the
conversation by saying the stop marker, as in τ-bench, or at ``max_turns``.

A turn that gets no answer (a refused connection, a timeout, an HTTP error, a user role that
cannot answer) ends the conversation with ``transport_error`` set: such a conversation is never
judged, and the turns it did play are kept.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

from agent_backtest.providers import ModelClient
from agent_backtest.simulate.models import (
    STOP_MARKER,
    ConversationRecord,
    Flow,
    SimulatedUser,
    TurnRecord,
)
from agent_backtest.simulate.targets import Agent, Conversation, TargetError, assemble_turn
from agent_backtest.trace import LLMRequest, Message

OPENING = "(The conversation starts: write your first message to the assistant.)"


@dataclass(frozen=True)
class UserRole:
    """The model that plays simulated users, behind the one call path."""

    client: ModelClient
    model: str


@dataclass
class Played:
    """A conversation, and a teardown that failed after it (the conversation stands)."""

    record: ConversationRecord
    teardown_error: str | None = None


class _Stopped(Exception):
    """The conversation cannot go on: why, as its transport error."""


async def play(
    flow: Flow,
    agent: Agent,
    target_name: str,
    isolated: bool,
    user_role: UserRole | None,
    result_chars: int,
) -> Played:
    """Play ``flow`` through ``agent`` from its first turn to its last."""
    started_at = datetime.now(UTC).isoformat()
    started = time.perf_counter()
    turns: list[TurnRecord] = []
    transport_error: str | None = None
    teardown_error: str | None = None
    try:
        conversation = await agent.open(flow.id)
    except TargetError as exc:
        transport_error = f"session: {exc}"
    else:
        try:
            if flow.turns is not None:
                messages = [turn.user for turn in flow.turns]
                await _scripted(conversation, messages, turns, result_chars)
            else:
                assert flow.user is not None and user_role is not None  # the plan checked
                await _simulated(conversation, flow.user, user_role, turns, result_chars)
        except _Stopped as stop:
            transport_error = str(stop)
        finally:
            try:
                await conversation.close()
            except TargetError as exc:
                teardown_error = str(exc)
    record = ConversationRecord(
        flow_id=flow.id,
        seed_id=flow.seed_id,
        family=flow.family,
        target=target_name,
        turns=turns,
        transport_error=transport_error,
        isolated=isolated,
        started_at=started_at,
        seconds=round(time.perf_counter() - started, 3),
    )
    return Played(record, teardown_error)


async def _scripted(
    conversation: Conversation, messages: list[str], turns: list[TurnRecord], result_chars: int
) -> None:
    history: list[dict[str, str]] = []
    for index, message in enumerate(messages, 1):
        await _turn(conversation, index, message, history, turns, result_chars)


async def _simulated(
    conversation: Conversation,
    user: SimulatedUser,
    role: UserRole,
    turns: list[TurnRecord],
    result_chars: int,
) -> None:
    history: list[dict[str, str]] = []
    for index in range(1, user.max_turns + 1):
        message = await _user_says(role, user, history)
        if message is None:
            return
        await _turn(conversation, index, message, history, turns, result_chars)


async def _turn(
    conversation: Conversation,
    index: int,
    message: str,
    history: list[dict[str, str]],
    turns: list[TurnRecord],
    result_chars: int,
) -> None:
    """One turn recorded; the history gains the user's message and the agent's answer."""
    sent_at = datetime.now(UTC).isoformat()
    try:
        answer = await conversation.turn(index, message, history)
    except TargetError as exc:
        turns.append(TurnRecord(index=index, user=message, error=str(exc), started_at=sent_at))
        raise _Stopped(f"turn {index}: {exc}") from None
    record = assemble_turn(index, message, answer, result_chars)
    record.started_at = sent_at
    turns.append(record)
    history.append({"role": "user", "content": message})
    history.append({"role": "assistant", "content": record.final_text or ""})


async def _user_says(
    role: UserRole, user: SimulatedUser, history: list[dict[str, str]]
) -> str | None:
    """The simulated user's next message, or None once it said the stop marker."""
    # The simulator speaks as the assistant of its own chat; the agent's answers are its user.
    flipped = [
        Message(role="assistant" if turn["role"] == "user" else "user", content=turn["content"])
        for turn in history
    ]
    messages = [Message(role="system", content=user_instructions(user))]
    messages += flipped if flipped else [Message(role="user", content=OPENING)]
    outcome = await role.client.generate(LLMRequest(messages=messages), role.model, 0)
    if outcome.response is None:
        error = outcome.error
        raise _Stopped(f"user role: {error.kind}: {error.detail}" if error else "user role failed")
    text = outcome.response.message.text().strip()
    if STOP_MARKER in text or not text:
        return None
    return text


def user_instructions(user: SimulatedUser) -> str:
    """The system prompt of the simulated user."""
    parts = [
        "You play a user talking to an AI assistant. Write only your next message to it, as "
        "the user would, one message at a time; never play the assistant.",
        f"Your task: {user.instructions}",
    ]
    if user.known_info:
        parts.append(f"What you know and may tell when asked: {user.known_info}")
    if user.unknown_info:
        parts.append(f"What you do not know (say so; never invent it): {user.unknown_info}")
    parts.append(
        f"When your task is done, or cannot go any further, reply with {STOP_MARKER} alone."
    )
    return "\n\n".join(parts)
