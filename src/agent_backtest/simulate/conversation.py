"""Playing one flow through the target: its scripted turns, or a simulated user's.

A simulated user is :class:`~agent_backtest.episodes.simulated_user.SimulatedUser` (the one a
bench episode uses) given the flow's instructions, what it knows and what it does not; it ends
the conversation by saying the stop marker, as in τ-bench, or at ``max_turns``.

A turn that gets no answer (a refused connection, a timeout, an HTTP error, a user role that
cannot answer) ends the conversation with ``transport_error`` set: such a conversation is never
judged, and the turns it did play are kept.

Each conversation records why it ended (``stop_reason``): the script ran out (``script_end``),
the simulated user said the stop marker (``user_stop``) or reached ``max_turns``, the last turn
reported an agent error (``agent_error``), a turn passed its deadline (``deadline``) or got no
answer otherwise (``transport_error``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from agent_backtest.episodes import simulated_user
from agent_backtest.episodes.calls import ModelCaller
from agent_backtest.simulate.models import (
    STOP_MARKER,
    ConversationRecord,
    Flow,
    SimulatedUser,
    StopReason,
    TurnRecord,
)
from agent_backtest.simulate.targets import Agent, Conversation, TargetError, assemble_turn


@dataclass(frozen=True)
class UserRole:
    """The model that plays simulated users: the run's calls of the ``user`` role."""

    caller: ModelCaller
    model: str
    """The model's name at its provider, as sent."""
    params: dict[str, object] = field(default_factory=dict)
    """The role's sampling parameters, sent with every request."""


@dataclass
class Played:
    """A conversation, and a teardown that failed after it (the conversation stands)."""

    record: ConversationRecord
    teardown_error: str | None = None


class _Stopped(Exception):
    """The conversation cannot go on: why, as its transport error."""

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind


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
    stop_reason: StopReason = "transport_error"
    session_id: str | None = None
    sent_id: str | None = None
    seed = user_seed(flow)
    try:
        conversation = await agent.open(flow.id)
    except TargetError as exc:
        transport_error = f"session: {exc}"
        stop_reason = _stop_reason(exc.kind)
    else:
        # what the target told the agent about the conversation, where it tells anything
        session_id = getattr(conversation, "session_id", None)
        sent_id = getattr(conversation, "conversation_id", None)
        try:
            if flow.turns is not None:
                messages = [turn.user for turn in flow.turns]
                await _scripted(conversation, messages, turns, result_chars)
                stop_reason = "script_end"
            else:
                assert flow.user is not None and user_role is not None  # the plan checked
                stop_reason = await _simulated(
                    conversation, flow.user, user_role, turns, result_chars, seed
                )
            if turns and turns[-1].error is not None:
                stop_reason = "agent_error"
        except _Stopped as stop:
            transport_error = str(stop)
            stop_reason = _stop_reason(stop.kind)
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
        stop_reason=stop_reason,
        agent_session_id=session_id,
        conversation_id=sent_id,
        user_seed=seed if flow.user is not None else None,
    )
    return Played(record, teardown_error)


def user_seed(flow: Flow) -> int:
    """The simulated user's seed: a repeat's own (0 for its first), else 0."""
    return (flow.repeat or 1) - 1


def _stop_reason(kind: str | None) -> StopReason:
    """A turn that passed its deadline, or one that got no answer otherwise."""
    return "deadline" if kind == "timeout" else "transport_error"


async def _scripted(
    conversation: Conversation, messages: list[str], turns: list[TurnRecord], result_chars: int
) -> None:
    history: list[dict[str, str]] = []
    for index, message in enumerate(messages, 1):
        await _turn(conversation, index, message, history, turns, result_chars)


async def _simulated(
    conversation: Conversation,
    flow_user: SimulatedUser,
    role: UserRole,
    turns: list[TurnRecord],
    result_chars: int,
    seed: int,
) -> StopReason:
    """Turns until the user says the stop marker (or nothing), or ``max_turns``."""
    brief = simulated_user.UserBrief(
        instructions=flow_user.instructions,
        known_info=flow_user.known_info,
        unknown_info=flow_user.unknown_info,
        stop_marker=STOP_MARKER,
    )
    user = simulated_user.SimulatedUser(
        role.caller, role.model, brief, seed=seed, params=role.params
    )
    history: list[dict[str, str]] = []
    for index in range(1, flow_user.max_turns + 1):
        said = await user.speak(_said(history, "assistant"), _said(history, "user"))
        if said.text is None:
            raise _Stopped(f"user role: {said.error_kind}: {said.error_detail}")
        if not said.text or user.stops(said.text):
            return "user_stop"
        await _turn(conversation, index, said.text, history, turns, result_chars)
    return "max_turns"


def _said(history: list[dict[str, str]], role: str) -> list[str]:
    """What one side said so far, in order."""
    return [entry["content"] for entry in history if entry["role"] == role]


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
        raise _Stopped(f"turn {index}: {exc}", exc.kind) from None
    record = assemble_turn(index, message, answer, result_chars)
    record.started_at = sent_at
    turns.append(record)
    history.append({"role": "user", "content": message})
    history.append({"role": "assistant", "content": record.final_text or ""})
