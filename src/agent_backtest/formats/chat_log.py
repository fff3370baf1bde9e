"""Reader of OpenAI request/response logs: JSON Lines, one model call per line.

Each line is ``{"request": <body>, "response": <body>}`` with optional ``id``, ``session_id``,
``started_at``/``ended_at`` (ISO 8601) or ``latency_ms``, and ``metadata``. Bodies are chat
completions (``messages`` → ``choices``), the Responses API (``input`` → ``output``) or Anthropic
Messages (``system`` + ``messages`` → ``content`` blocks); a streamed answer may be kept as its
server-sent events (one string), and is assembled.

Lines are grouped into conversations (see :mod:`agent_backtest.formats.conversations`): an
explicit ``session_id``; else a request that starts with an earlier request plus its answer
continues that conversation; else a Responses ``previous_response_id`` names the answer it
continues, and the full history is rebuilt. The file is read twice and never held: pass 1 keeps
hashes, pass 2 yields each session right after its last line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from agent_backtest.errors import RecordError
from agent_backtest.formats.base import ReadOptions, SkipLog, validation_errors_as
from agent_backtest.formats.conversations import ConversationPlan, Exchange, SessionAssembler
from agent_backtest.formats.exchanges import exchange as body_exchange
from agent_backtest.formats.isotime import complete_interval, parse_timestamp
from agent_backtest.formats.jsonio import iter_json_lines
from agent_backtest.trace import LLMCall, Session, Step

FORMAT = "chat_log"


@dataclass
class LogLine:
    """One usable line: the exchange, its times and the attributes kept on its step."""

    exchange: Exchange
    started_at: datetime | None = None
    ended_at: datetime | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


def sniff(head: str, path: Path) -> bool:
    """True when the first line is a JSON object with ``request`` and ``response``."""
    first = next((line for line in head.splitlines() if line.strip()), "")
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        # A first line longer than the head is cut off: judge it by how it starts.
        truncated = first.strip() == head.strip() and first.lstrip().startswith("{")
        return truncated and '"request"' in first and ('"messages"' in first or '"input"' in first)
    return isinstance(value, dict) and "request" in value and "response" in value


def read(path: Path, options: ReadOptions, skips: SkipLog) -> Iterator[Session]:
    """Yield the file's conversations, each right after its last line."""
    plan = ConversationPlan()
    for number, value in iter_json_lines(path):
        try:
            line = parse_line(value)
        except RecordError:
            continue  # reported in pass 2, in line order with everything else
        plan.place(number, line.exchange, line.exchange.record_id or default_name(path, number))
    assembler = SessionAssembler(plan, path, FORMAT, locate=lambda number: f"line {number}")
    for number, value in iter_json_lines(path):
        try:
            step = line_step(number, parse_line(value), assembler)
        except RecordError as exc:
            skips.record_error(exc, f"line {number}")
            continue
        yield from assembler.add(number, step)
    yield from assembler.flush()


def default_name(path: Path, number: int) -> str:
    """The stable id of a session started by a line without an ``id``."""
    return f"{path.name}#line-{number}"


@validation_errors_as("malformed_record")
def parse_line(value: Any) -> LogLine:
    """One log line as an exchange with its times; unusable lines raise :class:`RecordError`."""
    if not isinstance(value, dict):
        raise RecordError("malformed_record", "a line must be a JSON object")
    request, response = value.get("request"), value.get("response")
    if request is None:
        raise RecordError("malformed_request", "line has no request")
    if response is None:
        raise RecordError("no_response", "line has no response")
    check_not_error(value, response)
    exchange = body_exchange(None, request, response)
    exchange.record_id = _optional_id(value.get("id"), "id")
    exchange.session_id = _optional_id(value.get("session_id"), "session_id")
    started, ended = complete_interval(
        parse_timestamp(value.get("started_at"), "started_at"),
        parse_timestamp(value.get("ended_at"), "ended_at"),
        value.get("latency_ms"),
    )
    attributes = {key: value[key] for key in ("metadata", "latency_ms") if key in value}
    if exchange.previous_response_id is not None:
        attributes["previous_response_id"] = exchange.previous_response_id
    return LogLine(exchange, started, ended, attributes)


def check_not_error(line: dict[str, Any], response: Any) -> None:
    """Raise ``error_response`` for an error object, a non-2xx status or a failed response."""
    statuses = [line.get("status"), line.get("status_code")]
    if isinstance(response, dict):
        if response.get("error"):
            raise RecordError("error_response", _error_summary(response["error"]))
        statuses += [response.get("status"), response.get("status_code")]
    for status in statuses:
        if isinstance(status, int) and not isinstance(status, bool) and not 200 <= status < 300:
            raise RecordError("error_response", f"HTTP status {status}")
        if status == "failed":
            raise RecordError("error_response", "response status is failed")


def line_step(number: int, line: LogLine, assembler: SessionAssembler) -> Step:
    """The LLM step of a line, its request completed from earlier lines when chained."""
    exchange = line.exchange
    request, notes = assembler.full_request(number, exchange)
    call = LLMCall(
        request=request,
        response=exchange.response,
        reconstructed=exchange.previous_response_id is not None,
        notes=notes,
    )
    return Step(
        id=exchange.record_id or f"line-{number}",
        kind="llm",
        started_at=line.started_at,
        ended_at=line.ended_at,
        status="ok",
        llm=call,
        attributes=line.attributes,
    )


def _optional_id(value: Any, what: str) -> str | None:
    """An id field as text (numbers are accepted), or None when absent."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise RecordError("mistyped_field", f"{what} must be a string")


def _error_summary(error: Any) -> str:
    """A short, credential-free description of an error object."""
    # Only the error's type and code: provider messages can quote parts of a credential.
    if isinstance(error, dict):
        named = [str(error[key]) for key in ("type", "code") if error.get(key)]
        if named:
            return "error response: " + ", ".join(named)
    return "error response"
