"""Reader of VCR cassettes (vcrpy YAML): recorded HTTP interactions with a model API.

A cassette is ``{interactions: [{request: {method, uri, body, headers}, response: {status: {code},
body: {string}}}], version: 1}``. Every POST to a model endpoint (``…/chat/completions``,
``…/responses``, Anthropic's ``…/messages``) becomes an LLM step, its answer assembled when it
was streamed; the steps are grouped into conversations by the same rules as request/response
logs. Headers are never read: requests carry ``authorization: Bearer …``.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
import yaml

from agent_backtest.bounded_yaml import BoundedLoader, yaml_problem
from agent_backtest.errors import InputError, RecordError
from agent_backtest.formats.base import ReadOptions, SkipLog, validation_errors_as
from agent_backtest.formats.conversations import ConversationPlan, Exchange, SessionAssembler
from agent_backtest.formats.exchanges import api_of_path, exchange
from agent_backtest.formats.limits import check_size
from agent_backtest.formats.streams import is_event_stream
from agent_backtest.trace import LLMCall, Session, Step

FORMAT = "cassette"
_INTERACTIONS = re.compile(r"^interactions:\s*$", re.MULTILINE)


def sniff(head: str, path: Path) -> bool:
    """True for YAML whose top level has ``interactions:`` holding request/response pairs."""
    return bool(_INTERACTIONS.search(head)) and "request:" in head and "uri:" in head


def read(path: Path, options: ReadOptions, skips: SkipLog) -> Iterator[Session]:
    """Yield the conversations of the cassette's model-call interactions."""
    interactions = load_interactions(path)
    parsed: list[Exchange | RecordError] = []
    plan = ConversationPlan()
    for index, interaction in enumerate(interactions):
        try:
            exchange = interaction_exchange(interaction)
        except RecordError as exc:
            parsed.append(exc)
            continue
        parsed.append(exchange)
        plan.place(index, exchange, f"{path.name}#interaction-{index}")
    assembler = SessionAssembler(plan, path, FORMAT, locate=location)
    for index, item in enumerate(parsed):
        if isinstance(item, RecordError):
            skips.record_error(item, location(index))
            continue
        request, notes = assembler.full_request(index, item)
        call = LLMCall(request=request, response=item.response, notes=notes)
        yield from assembler.add(
            index, Step(id=f"interaction-{index}", kind="llm", status="ok", llm=call)
        )
    yield from assembler.flush()


def location(index: int) -> str:
    """Where interaction ``index`` sits in the cassette."""
    return f"interactions[{index}]"


def load_interactions(path: Path) -> list[Any]:
    """The cassette's interactions; YAML errors name the line and column."""
    try:
        check_size(path.stat().st_size, path)
        with path.open("rb") as handle:
            document = yaml.load(handle, Loader=BoundedLoader)
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f"line {mark.line + 1} column {mark.column + 1}"
        elif isinstance(exc, yaml.reader.ReaderError):  # undecodable bytes: no line is known
            where = f"byte {exc.position}"
        else:
            where = "document"
        raise InputError(
            path, where, f"not valid YAML ({yaml_problem(exc)}); check the cassette is complete"
        ) from None
    if not isinstance(document, dict) or not isinstance(document.get("interactions"), list):
        raise InputError(path, "$", "expected a VCR cassette: a mapping with an interactions list")
    return document["interactions"]


@validation_errors_as("malformed_interaction")
def interaction_exchange(interaction: Any) -> Exchange:
    """One recorded model round trip; anything else raises :class:`RecordError`."""
    if not isinstance(interaction, dict):
        raise RecordError("malformed_interaction", "an interaction must be a mapping")
    request, response = interaction.get("request"), interaction.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        raise RecordError("malformed_interaction", "interaction without request and response")
    method = str(request.get("method", "")).upper()
    # Only the path: a query string can hold an API key.
    try:
        url_path = urlsplit(str(request.get("uri", ""))).path
    except ValueError:
        url_path = ""
    api = api_of_path(url_path)
    if method != "POST" or api is None:
        raise RecordError("not_chat_completion", f"{method} {url_path}")
    status = _status_code(response)
    if status is not None and not 200 <= status < 300:
        raise RecordError("error_response", f"HTTP status {status}")
    body = response.get("parsed_body", response.get("body"))
    answer = decode_body(body.get("string") if _is_vcr_body(body) else body, "response")
    return exchange(api, decode_body(_request_body(request), "request"), answer)


def _request_body(request: dict[str, Any]) -> Any:
    """The request body: ``body``, or ``parsed_body`` where a recorder stored it decoded."""
    # Some recorders (pydantic-ai's cassette serializer) keep JSON bodies as YAML data.
    return request["parsed_body"] if request.get("parsed_body") is not None else request.get("body")


def decode_body(raw: Any, what: str) -> Any:
    """A recorded body as JSON: text, bytes (gzip or deflate compressed too), or already parsed.
    A streamed body (server-sent events) is returned as its text, for the stream assembler."""
    if isinstance(raw, dict | list):
        # A body stored as YAML data: through JSON, so that YAML-only values (dates, bytes,
        # integers beyond 64 bits) become what a JSON body would have held.
        try:
            raw = json.dumps(raw, default=str)
        except (ValueError, RecursionError):
            raise RecordError("undecodable_body", f"{what} body is not JSON data") from None
    if isinstance(raw, bytes):
        raw = _decompress(raw)
    if not isinstance(raw, str | bytes) or not raw.strip():
        raise RecordError("undecodable_body", f"{what} has no body")
    try:
        return orjson.loads(raw)
    except (orjson.JSONDecodeError, ValueError):
        pass
    text = raw if isinstance(raw, str) else raw.decode("utf-8", errors="replace")
    if is_event_stream(text):
        return text
    raise RecordError("undecodable_body", f"{what} body is not JSON") from None


def _decompress(raw: bytes) -> bytes:
    """A gzip or deflate body uncompressed; other bytes as they are."""
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError):
            raise RecordError("undecodable_body", "corrupt gzip body") from None
    if raw[:1] == b"\x78":  # zlib header of a deflate-encoded body
        try:
            return zlib.decompress(raw)
        except zlib.error:
            return raw
    return raw


def _is_vcr_body(body: Any) -> bool:
    """True for vcrpy's ``{string: …}`` wrapper around a recorded body."""
    return isinstance(body, dict) and "string" in body


def _status_code(response: dict[str, Any]) -> int | None:
    """The recorded HTTP status code, or None when the cassette has none."""
    status = response.get("status")
    code = status.get("code") if isinstance(status, dict) else status
    return code if isinstance(code, int) and not isinstance(code, bool) else None
