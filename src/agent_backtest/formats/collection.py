"""Reading several inputs as one stream of sessions, with what was read of each input.

This is where the reading options that apply to every format take effect: tool definitions and
the recorded model for inputs that lack them, duplicate sessions across inputs, strict mode.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from agent_backtest.errors import InputError
from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.formats.limits import MAX_DEPTH
from agent_backtest.formats.registry import check_forced_format, detect, local_input, reader_for
from agent_backtest.redaction import drop_secret_fields
from agent_backtest.trace import Message, Session, dump_record
from agent_backtest.trace.openai_wire import parts_the_api_takes


@dataclass
class InputSummary:
    """What one input file gave: its format, sessions, steps by kind, and what was skipped."""

    file: str
    format: str
    skips: SkipLog
    sessions: int = 0
    duplicate_sessions: int = 0
    steps: Counter[str] = field(default_factory=Counter)
    llm_steps_reconstructed: int = 0
    llm_steps_without_tools: int = 0
    llm_steps_tools_supplied: int = 0
    secret_fields_dropped: Counter[str] = field(default_factory=Counter)
    """Request fields left out as credentials or transport options, by path (never sent)."""
    llm_steps_unsent_parts: int = 0
    """LLM steps whose messages hold parts chat completions does not take (reasoning,
    encrypted reasoning, other APIs' parts): kept in the trace, left out of a replay."""


@dataclass
class SessionStream:
    """Iterates the sessions of several inputs in order; ``summaries`` fills in as it goes."""

    paths: Sequence[Path]
    options: ReadOptions
    format: str | None = None
    summaries: list[InputSummary] = field(default_factory=list)
    line: bytes = b""
    """The session just yielded as one line of canonical JSONL (no newline): written here once,
    since the same bytes tell whether a session was read before."""
    _seen: dict[str, bytes] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Session]:
        for given in self.paths:
            path = local_input(given)
            if not path.exists():
                raise InputError(path, None, "no such file")
            reader = reader_for(self.format) if self.format else detect(path)
            skips = SkipLog(str(path), strict=self.options.strict)
            if self.options.explain:
                skips.readings = []
            summary = InputSummary(str(path), reader.FORMAT, skips)
            self.summaries.append(summary)
            try:
                for session in reader.read(path, self.options, summary.skips):
                    dropped = fill_in(session, self.options)
                    line = dump_record(session)
                    if self._is_repeat(session, line, summary):
                        continue
                    summary.secret_fields_dropped.update(dropped)
                    count(session, summary)
                    self.line = line
                    yield session
            except InputError:
                # A forced format whose reader cannot parse the file at all: say what the
                # format expects and what the file is, rather than where its parser stopped.
                if self.format and summary.sessions == 0:
                    check_forced_format(reader, path)
                raise
            except (RecursionError, ValueError, TypeError) as exc:
                # A value nested too deep inside a JSON string of the trace (tool arguments,
                # an attribute holding messages), met by code that recurses: Python, pydantic's
                # serialiser ("depth exceeded") or orjson's ("Recursion limit reached").
                if not isinstance(exc, RecursionError) and not _too_deep(exc):
                    raise
                raise InputError(
                    given, None, f"value too deep: nested more than {MAX_DEPTH} levels"
                ) from None
            if self.format and summary.sessions == summary.duplicate_sessions == 0:
                check_forced_format(reader, path)

    def _is_repeat(self, session: Session, line: bytes, summary: InputSummary) -> bool:
        """True for a session already read (same id); a same-id session that differs is a skip.
        ``line`` is the session as written."""
        digest = content_digest(session, line)
        earlier = self._seen.get(session.id)
        if earlier is None:
            self._seen[session.id] = digest
            return False
        if earlier == digest:
            summary.duplicate_sessions += 1
        else:
            location = session.source.location if session.source else None
            summary.skips.skip(
                "session_id_conflict",
                location or f"session {session.id}",
                f"session {session.id!r} was read before with other content",
            )
        return True


def content_digest(session: Session, line: bytes) -> bytes:
    """A digest of everything a session holds but where it was read from, taken from ``line``,
    the session as written (its one serialisation), with the source field cut out.

    The source is the third field, after the schema and the id, and the turns always follow it;
    no string value can hold the field's bytes (a string's quotes are escaped).
    """
    if session.source is not None:
        line = line.replace(b'"source":' + dump_record(session.source) + b",", b"", 1)
    return hashlib.sha256(line).digest()


def _too_deep(error: Exception) -> bool:
    message = str(error)
    return "depth exceeded" in message or "Recursion limit reached" in message


def explain(path: Path, options: ReadOptions, format: str | None = None) -> InputSummary:
    """Read one trace file keeping every span's reading (``summary.skips.readings``): the step
    each span or observation became, the dialect that read it, and what blocks its unit."""
    stream = SessionStream([path], replace(options, explain=True), format)
    for _ in stream:
        pass
    return stream.summaries[0]


def fill_in(session: Session, options: ReadOptions) -> Counter[str]:
    """Apply ``--tools`` and ``--recorded-model`` to LLM steps that did not record them, and
    drop the request fields that hold credentials or client transport options; the fields
    dropped, counted by path."""
    dropped: Counter[str] = Counter()
    for step in session.steps():
        call = step.llm
        if call is None:
            continue
        dropped.update(drop_secret_fields(call.request.params))
        if call.request.tools is None and options.tools is not None:
            call.request.tools = list(options.tools)
            call.tools_supplied = True
        if options.recorded_model and call.request.model is None:
            call.request.model = options.recorded_model
            call.notes.append("model from --recorded-model")
            if call.response is not None and call.response.model is None:
                call.response.model = options.recorded_model
    return dropped


def count(session: Session, summary: InputSummary) -> None:
    """Add a session's steps to the input's summary."""
    summary.sessions += 1
    for step in session.steps():
        summary.steps[step.kind] += 1
        if step.llm is not None:
            summary.llm_steps_reconstructed += step.llm.reconstructed
            summary.llm_steps_without_tools += step.llm.request.tools is None
            summary.llm_steps_tools_supplied += step.llm.tools_supplied
            summary.llm_steps_unsent_parts += has_unsent_parts(step.llm.request.messages)


def has_unsent_parts(messages: list[Message]) -> bool:
    """True when a message holds a content part the chat-completions API would refuse."""
    return any(
        part.type not in parts_the_api_takes(message.role)
        for message in messages
        if isinstance(message.content, list)
        for part in message.content
    )
