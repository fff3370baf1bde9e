"""The agent's own traces joined to a simulate run's conversations.

Every turn an HTTP target sends carries a W3C ``traceparent`` (recorded on the turn), and the
agent's session id is recorded on the conversation. An agent that exports its traces continues
that trace, or tags its spans with its session id; either is enough to say which exported
session belongs to which conversation. The matched sessions are written as canonical sessions
named by their flow's id, so their LLM steps are replay units: the model calls the agent made
inside a simulated conversation can be backtested like production's.

A conversation whose traces the agent exported as several sessions (a trace per turn, no
session id) gets them joined in the order of its turns.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from agent_backtest.simulate.models import ConversationRecord
from agent_backtest.trace import Session, Turn

SIMULATE_KEY = "simulate"
"""The metadata key that says which run and conversation a joined session belongs to."""


@dataclass
class JoinedTraces:
    """The agent's sessions that belong to a run's conversations, one per conversation."""

    sessions: list[Session] = field(default_factory=list)
    read: int = 0
    """Sessions in the trace files."""
    unmatched: int = 0
    """Sessions that belong to no conversation of the run (another run's, production's)."""
    conversations: int = 0
    """Conversations of the run."""

    @property
    def joined(self) -> int:
        """Conversations that have the agent's own trace."""
        return len(self.sessions)


def trace_id(traceparent: str | None) -> str | None:
    """The trace id of a W3C ``traceparent`` (``00-TRACE-SPAN-FLAGS``), lower case."""
    if not traceparent:
        return None
    parts = traceparent.strip().split("-")
    return parts[1].lower() if len(parts) == 4 and len(parts[1]) == 32 else None


class _Index:
    """Where each trace id and agent session id of the run's conversations leads."""

    def __init__(self, conversations: Iterable[ConversationRecord]) -> None:
        self.by_flow: dict[str, ConversationRecord] = {}
        self.by_session: dict[str, str] = {}
        self.by_trace: dict[str, tuple[str, int]] = {}
        for conversation in conversations:
            self.by_flow[conversation.flow_id] = conversation
            if conversation.agent_session_id:
                self.by_session[conversation.agent_session_id] = conversation.flow_id
            for turn in conversation.turns:
                found = trace_id(turn.traceparent)
                if found is not None:
                    self.by_trace[found] = (conversation.flow_id, turn.index)

    def match(self, session: Session) -> tuple[str, int] | None:
        """The flow the session belongs to, and the first turn of it that it covers (by its
        trace ids; 0 when it matched by session id alone)."""
        turns = [
            self.by_trace[trace.lower()]
            for trace in session.metadata.get("trace_ids") or ()
            if isinstance(trace, str) and trace.lower() in self.by_trace
        ]
        if turns:
            return min(turns, key=lambda found: found[1])
        flow_id = self.by_session.get(session.id)
        return (flow_id, 0) if flow_id is not None else None


def join_traces(
    run_name: str, conversations: Iterable[ConversationRecord], sessions: Iterable[Session]
) -> JoinedTraces:
    """The sessions of ``sessions`` that belong to ``conversations``, one per conversation, in
    the order the conversations were recorded."""
    index = _Index(conversations)
    joined = JoinedTraces(conversations=len(index.by_flow))
    pieces: dict[str, list[tuple[int, int, Session]]] = {}
    for order, session in enumerate(sessions):
        joined.read += 1
        found = index.match(session)
        if found is None:
            joined.unmatched += 1
            continue
        flow_id, first_turn = found
        pieces.setdefault(flow_id, []).append((first_turn, order, session))
    for flow_id, conversation in index.by_flow.items():
        if flow_id in pieces:
            ordered = [session for _, _, session in sorted(pieces[flow_id], key=_order)]
            joined.sessions.append(_as_conversation(run_name, conversation, ordered))
    return joined


def _order(piece: tuple[int, int, Session]) -> tuple[int, int]:
    return piece[0], piece[1]


def _as_conversation(
    run_name: str, conversation: ConversationRecord, pieces: list[Session]
) -> Session:
    """One session named by the flow, its turns those of every piece in order, and metadata
    that leads back to the run, the conversation and the agent's own session."""
    first = pieces[0]
    turns = [turn for piece in pieces for turn in piece.turns]
    metadata = dict(first.metadata)
    metadata["trace_ids"] = [t for piece in pieces for t in piece.metadata.get("trace_ids") or ()]
    metadata[SIMULATE_KEY] = {
        "run": run_name,
        "flow_id": conversation.flow_id,
        "family": conversation.family,
        "agent_session_ids": sorted({piece.id for piece in pieces}),
        "conversation_id": conversation.conversation_id,
    }
    return first.model_copy(
        update={
            "id": conversation.flow_id,
            "turns": [_renumbered(turn, i) for i, turn in enumerate(turns)],
            "metadata": metadata,
        }
    )


def _renumbered(turn: Turn, index: int) -> Turn:
    return turn if turn.index == index else turn.model_copy(update={"index": index})
