"""Grouping recorded model calls into conversations, in two passes with bounded memory.

Request/response logs and HTTP cassettes record model calls one by one, with nothing that says
which calls belong to one conversation. An agent loop leaves a clear mark, though: each request
is the previous request plus the previous answer plus new input (tool results, a user message).
And with the OpenAI Responses API, a request names its predecessor by ``previous_response_id``.

Pass 1 (:class:`ConversationPlan`) places every record in a session while keeping only hashes:
a chained sha256 over the canonical form of each message prefix that ends with an answer, and the
response ids. It also notes the last record of every session. Pass 2
(:class:`SessionAssembler`) builds the steps again, rebuilds the history of chained Responses
requests, and hands each session over right after its last record, so a reader can yield
sessions while it is still reading the file.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agent_backtest import trace
from agent_backtest.errors import RecordError

NO_SESSION = -1


@dataclass
class Exchange:
    """One recorded model round trip, parsed, with what grouping needs to know about it."""

    request: trace.LLMRequest
    """The request; for a chained Responses request only its instructions and new input."""
    response: trace.LLMResponse
    record_id: str | None = None
    """The record's own id, if it has one."""
    session_id: str | None = None
    """An explicit conversation id; it wins over every other grouping rule."""
    instructions: int = 0
    """How many leading request messages come from Responses ``instructions``."""
    previous_response_id: str | None = None
    """The Responses API answer this request continues (its history is kept server-side)."""
    notes: list[str] = field(default_factory=list)
    """How the reader filled in anything not recorded as is."""


def message_digest(message: trace.Message) -> bytes:
    """sha256 of the canonical form of a message, blind to how a client re-serialised it.

    An agent sends the model's answer back in its next request, but rarely byte for byte: an
    empty content may become null, text may be one string or a list of text parts, and argument
    JSON may be re-spaced. Those differences must not split a conversation.
    """
    content: object = message.content
    if isinstance(content, list):
        if all(part.type == "text" for part in content):
            content = "".join(part.text or "" for part in content)
        else:
            content = [part.model_dump(mode="json", exclude_none=True) for part in content]
    calls = [
        {"id": call.id, "name": call.name, "arguments": call.arguments, "raw": call.arguments_raw}
        for call in message.tool_calls or []
    ]
    value = {
        "role": message.role,
        "content": content or None,
        "tool_calls": calls or None,
        "tool_call_id": message.tool_call_id,
    }
    return hashlib.sha256(trace.canonical_json(value)).digest()


def extend_chain(previous: bytes, digest: bytes) -> bytes:
    """The hash of a message prefix, from the hash of the prefix before it and one message."""
    return hashlib.sha256(previous + digest).digest()


def prefix_hashes(messages: list[trace.Message]) -> list[bytes]:
    """Hash of ``messages[:k + 1]`` at position k, for every k."""
    chain, current = [], b""
    for message in messages:
        current = extend_chain(current, message_digest(message))
        chain.append(current)
    return chain


class ConversationPlan:
    """Pass 1: the session of every record, and the last record of every session.

    Memory grows with one hash per answer, one id per response and one integer per record,
    never with message content.
    """

    def __init__(self) -> None:
        """An empty plan: no sessions, no hashes."""
        self._session_of = array("q")
        self._answers: dict[bytes, list[int]] = {}
        self._responses: dict[str, int] = {}
        self._explicit: dict[str, int] = {}
        self.names: list[str] = []
        self.first: list[int] = []
        self.last: list[int] = []
        self.references: Counter[str] = Counter()

    def place(self, index: int, exchange: Exchange, default_name: str) -> int | None:
        """Assign record ``index`` to a session and return it; None when its history is missing.

        ``default_name`` names a session that this record starts.
        """
        previous = exchange.previous_response_id
        owner = None
        if previous is not None:
            owner = self._responses.get(previous)
            if owner is None:  # continues an answer this file does not hold
                return None
            self.references[previous] += 1
        messages = exchange.request.messages
        chain = prefix_hashes(messages) if previous is None else None
        if exchange.session_id is not None:
            session = self._explicit_session(exchange.session_id, index)
        elif owner is not None:
            session = owner
        else:
            session = self._continued(messages, chain or [])
            if session is None:
                session = self._new_session(default_name, index)
        self._assign(index, session)
        if chain is not None:
            answer = extend_chain(
                chain[-1] if chain else b"", message_digest(exchange.response.message)
            )
            self._answers.setdefault(answer, []).append(session)
        if exchange.response.id is not None:
            self._responses[exchange.response.id] = session
        return session

    def session_of(self, index: int) -> int | None:
        """The session record ``index`` was placed in, or None."""
        if index >= len(self._session_of) or self._session_of[index] == NO_SESSION:
            return None
        return self._session_of[index]

    def _continued(self, messages: list[trace.Message], chain: list[bytes]) -> int | None:
        """The session whose earlier answer this request continues, if any."""
        # The longest earlier answer this request starts with is the call it continues.
        for end in range(len(messages), 0, -1):
            if messages[end - 1].role != "assistant":
                continue
            owners = self._answers.get(chain[end - 1])
            if owners:
                # Identical openings of several conversations: each continues in turn, and the
                # last one keeps any further continuation (a retry of the same request).
                return owners.pop(0) if len(owners) > 1 else owners[0]
        return None

    def _explicit_session(self, session_id: str, index: int) -> int:
        """The session of an explicit ``session_id``, created on first use."""
        if session_id not in self._explicit:
            self._explicit[session_id] = self._new_session(session_id, index)
        return self._explicit[session_id]

    def _new_session(self, name: str, index: int) -> int:
        """A new session starting (and, so far, ending) at record ``index``."""
        self.names.append(name)
        self.first.append(index)
        self.last.append(index)
        return len(self.names) - 1

    def _assign(self, index: int, session: int) -> None:
        """Record that record ``index`` belongs to ``session``."""
        while len(self._session_of) <= index:
            self._session_of.append(NO_SESSION)
        self._session_of[index] = session
        self.last[session] = max(self.last[session], index)


class SessionAssembler:
    """Pass 2: collects the steps of each session and builds it after its last record."""

    def __init__(
        self, plan: ConversationPlan, file: Path, format_name: str, locate: Callable[[int], str]
    ) -> None:
        """An assembler for the plan of ``file``; ``locate`` names a record's place."""
        self._plan = plan
        self._file = file
        self._format = format_name
        self._locate = locate
        self._open: dict[int, list[trace.Step]] = {}
        # Histories of answers a later record continues, dropped once the last one has.
        self._histories: dict[str, list[trace.Message]] = {}
        self._waiting = Counter(plan.references)

    def full_request(self, index: int, exchange: Exchange) -> tuple[trace.LLMRequest, list[str]]:
        """The request as the model saw it, with notes; chained histories are rebuilt here."""
        request, notes = exchange.request, list(exchange.notes)
        previous = exchange.previous_response_id
        if previous is not None:
            placed = self._plan.session_of(index) is not None
            history = self._take_history(previous) if placed else None
            if history is None:
                raise RecordError(
                    "history_not_recorded",
                    f"previous_response_id {previous!r} names no earlier record of this file",
                )
            head = request.messages[: exchange.instructions]
            tail = request.messages[exchange.instructions :]
            request = request.model_copy(update={"messages": head + history + tail})
            notes.append(
                f"history rebuilt from previous_response_id {previous}: the earlier "
                "request and answer, then this request's input"
            )
        response_id = exchange.response.id
        if response_id is not None and self._waiting[response_id] > 0:
            self._histories[response_id] = [
                *request.messages[exchange.instructions :],
                exchange.response.message,
            ]
        return request, notes

    def add(self, index: int, step: trace.Step) -> Iterator[trace.Session]:
        """Add the step of record ``index``; yields its session if this was its last record."""
        session = self._plan.session_of(index)
        if session is None:
            raise ValueError(f"record {index} was not placed in pass 1")
        self._open.setdefault(session, []).append(step)
        if self._plan.last[session] == index:
            yield self._build(session, self._open.pop(session))

    def flush(self) -> Iterator[trace.Session]:
        """Sessions still open at the end (only when pass 2 dropped a session's last record)."""
        for session in sorted(self._open, key=lambda number: self._plan.first[number]):
            yield self._build(session, self._open[session])
        self._open.clear()

    def _take_history(self, response_id: str) -> list[trace.Message] | None:
        """The history an answer left, dropped after its last continuation."""
        history = self._histories.get(response_id)
        if history is not None:
            self._waiting[response_id] -= 1
            if self._waiting[response_id] <= 0:
                del self._histories[response_id]
        return history

    def _build(self, session: int, steps: list[trace.Step]) -> trace.Session:
        """A finished session from its steps, split into turns."""
        location = self._locate(self._plan.first[session])
        return trace.Session(
            id=self._plan.names[session],
            source=trace.SourceRef(file=str(self._file), format=self._format, location=location),
            turns=split_turns(steps),
        )


def split_turns(steps: list[trace.Step]) -> list[trace.Turn]:
    """Turns of a session's LLM steps: a new turn at each request ending in a new user message."""
    turns: list[trace.Turn] = []
    previous: list[trace.Message] = []
    for step in steps:
        messages = step.llm.request.messages if step.llm else []
        if not turns or _opens_turn(messages, previous):
            turns.append(trace.Turn(index=len(turns), user_input=_last_user_text(messages)))
        turn = turns[-1]
        turn.steps.append(step)
        answer = step.llm.response.message if step.llm and step.llm.response else None
        # The turn's output is the last answer that speaks to the user, not a tool-call step.
        if answer is not None and not answer.tool_calls and answer.text():
            turn.agent_output = answer.text()
        previous = messages
    return turns


def _opens_turn(messages: list[trace.Message], previous: list[trace.Message]) -> bool:
    """True when a request ends with a user message the previous request did not hold."""
    if not messages or messages[-1].role != "user":
        return False
    position = len(messages) - 1
    return not (position < len(previous) and previous[position] == messages[-1])


def _last_user_text(messages: list[trace.Message]) -> str | None:
    """The text of the last user message of a request, if any."""
    for message in reversed(messages):
        if message.role == "user":
            return message.text()
    return None
