"""An agent over HTTP: an optional session per conversation, one request per turn, the answer
as one JSON document or as server-sent events.

Every turn's request carries a W3C ``traceparent`` header of a fresh trace, recorded with the
turn, so an agent that exports its own traces can have them joined to the conversation; the
target's headers may also carry ``${conversation_id}``, an id of the whole conversation.

Only a refused connection (or a connect timeout) is tried again: then nothing reached the
agent, so a turn is never delivered twice. Each turn has one deadline for all of it, connect
tries and streaming included.
"""

from __future__ import annotations

import asyncio
import os
import secrets as random_ids
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
import orjson
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_fixed

from agent_backtest.episodes.calls import ModelCaller
from agent_backtest.errors import UserError
from agent_backtest.simulate.targets.config import (
    HttpTarget,
    JsonAnswer,
    Request,
    render,
    render_body,
)
from agent_backtest.simulate.targets.errors import TargetError
from agent_backtest.simulate.targets.events import (
    MISSING,
    EventPaths,
    TurnEvent,
    at_path,
    event_from,
)
from agent_backtest.simulate.targets.limits import TurnBudget, read_within
from agent_backtest.simulate.targets.sse import sse_events
from agent_backtest.simulate.targets.turns import TargetAnswer

NOT_DELIVERED = (httpx.ConnectError, httpx.ConnectTimeout)
ERROR_BODY_BYTES = 4096  # what is read of an error answer: its message is cut to 200 characters
PREFLIGHT = "preflight"
"""The flow id the pre-flight session is opened with (``${flow_id}`` in its templates)."""


def http_secrets(target: HttpTarget) -> dict[str, str]:
    """The values of the target's environment names; a missing one is a user error."""
    values = {}
    for name, variable in target.env.items():
        value = os.environ.get(variable)
        if not value:
            raise UserError(
                f"{target.name}: set {variable} (the target file names it for ${{{name}}})",
                "target",
            )
        values[name] = value
    return values


class HttpAgent:
    """One connection pool to the agent, shared by every conversation of the run."""

    def __init__(self, target: HttpTarget, secrets: dict[str, str]) -> None:
        self.target = target
        self.values = dict(secrets)
        self.client = httpx.AsyncClient(base_url=target.base_url, timeout=target.timeout)
        self._credential_lock = asyncio.Lock()
        self._credential_generation = 0

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every value that must not be shown (keys from the environment, the credential)."""
        return tuple(value for value in self.values.values() if value)

    async def start(self, models: Mapping[str, ModelCaller]) -> None:
        """Fetch the credential, when the target has a command for it (the agent runs its
        own models: ``models`` is not used)."""
        if self.target.credential_command:
            await self._refresh_credential(self._credential_generation)

    @property
    def preflight_step(self) -> str:
        """What :meth:`preflight` sends, in words."""
        if self.target.health is not None:
            what = "health request"
        elif self.target.session is not None:
            what = "session create and teardown"
        else:
            what = "connection"
        return f"{what} at {self.target.base_url}"

    async def preflight(self) -> None:
        """Show, before the run writes anything, that the agent answers and takes the run's
        credential: its health request, else one session opened and torn down, else a
        connection opened (nothing sent); a target error when it does not."""
        await self.start({})
        if self.target.health is not None:
            await self.send(self.target.health, HttpConversation(self, PREFLIGHT).values(None, ""))
        elif self.target.session is not None:
            conversation = await self.open(PREFLIGHT)
            await conversation.close()
        else:
            await self._connect()

    async def _connect(self) -> None:
        """Open a connection to the agent's host and port and close it, tried as a request is."""
        url = httpx.URL(self.target.base_url)
        port = url.port or (443 if url.scheme == "https" else 80)
        tries = self.target.connect_retries + 1
        for attempt in range(1, tries + 1):
            try:
                async with asyncio.timeout(self.target.timeout):
                    _, writer = await asyncio.open_connection(url.host, port)
            except (OSError, TimeoutError) as exc:
                if attempt == tries:
                    detail = str(exc) or type(exc).__name__
                    raise TargetError("connection", f"{detail} ({tries} tries)") from None
                await asyncio.sleep(self.target.retry_wait)
            else:
                writer.close()
                await writer.wait_closed()
                return

    async def open(self, flow_id: str) -> HttpConversation:
        """A conversation: the agent session it asked for, opened."""
        conversation = HttpConversation(self, flow_id)
        session = self.target.session
        if session is not None:
            answer = await self.send(session.create, conversation.values(None, ""))
            found = at_path(_json(answer, self.secrets), session.create.id_path)
            if found is MISSING or found in (None, ""):
                raise TargetError(
                    "malformed_answer",
                    f"the session answer has no id at {session.create.id_path!r}",
                )
            conversation.session_id = str(found)
        return conversation

    async def send(self, request: Request, values: dict[str, str]) -> bytes:
        """Send a request and read its whole answer (within the turn timeout and the answer
        cap); an HTTP error status, a timeout or a broken connection is a target error."""
        try:
            async with asyncio.timeout(self.target.timeout):
                response = await self.stream(request, values)
                try:
                    return await read_within(response, TurnBudget(self.target, self.secrets))
                finally:
                    await response.aclose()
        except TimeoutError:
            raise TargetError("timeout", f"no answer within {self.target.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise TargetError("connection", str(exc) or type(exc).__name__, self.secrets) from None

    async def stream(self, request: Request, values: dict[str, str]) -> httpx.Response:
        """Send a request and return the open response (its body not read yet); tried again
        after a refused connection; once more with a fresh credential after HTTP 401."""
        generation = self._credential_generation
        response = await self._send_once(request, values)
        if response.status_code == 401 and self.target.credential_command:
            await response.aclose()
            await self._refresh_credential(generation)
            response = await self._send_once(request, values)
        if response.status_code >= 400:
            try:
                body = (await _start_of(response)).decode(errors="replace")
            finally:
                await response.aclose()
            kind = "http_5xx" if response.status_code >= 500 else f"http_{response.status_code}"
            raise TargetError(kind, f"HTTP {response.status_code}: {body[:200]}", self.secrets)
        return response

    async def _send_once(self, request: Request, values: dict[str, str]) -> httpx.Response:
        built = self._build(request, {**self.values, **values})
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(NOT_DELIVERED),
            stop=stop_after_attempt(self.target.connect_retries + 1),
            wait=wait_fixed(self.target.retry_wait),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await self.client.send(built, stream=True)
        except NOT_DELIVERED as exc:
            tries = self.target.connect_retries + 1
            raise TargetError(
                "connection", f"{exc or type(exc).__name__} ({tries} tries)", self.secrets
            ) from None
        except httpx.TimeoutException as exc:
            raise TargetError("timeout", str(exc) or type(exc).__name__, self.secrets) from None
        except httpx.HTTPError as exc:
            raise TargetError("connection", str(exc) or type(exc).__name__, self.secrets) from None
        raise AssertionError("unreachable: tenacity returns or raises")  # pragma: no cover

    def _build(self, request: Request, values: dict[str, str]) -> httpx.Request:
        headers = {key: render(value, values) for key, value in self.target.headers.items()}
        if values.get("traceparent"):
            headers.setdefault("traceparent", values["traceparent"])
        path = render(request.path, values)
        body = render_body(request.body, values) if request.body is not None else None
        if body is None:
            return self.client.build_request(request.method, path, headers=headers)
        if request.body_format == "form":
            form = {key: str(value) for key, value in body.items()}
            return self.client.build_request(request.method, path, headers=headers, data=form)
        return self.client.build_request(request.method, path, headers=headers, json=body)

    async def _refresh_credential(self, seen_generation: int) -> None:
        """Run the credential command once however many turns saw its key expire."""
        async with self._credential_lock:
            if seen_generation != self._credential_generation:
                return
            command = self.target.credential_command or ""
            process = await asyncio.create_subprocess_shell(
                command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
            )
            out, _ = await process.communicate()
            key = out.decode().strip()
            if process.returncode != 0 or not key:
                raise TargetError(
                    "credential",
                    f"the credential command failed (exit {process.returncode}, "
                    f"{len(key)} characters printed)",
                )
            self.values["credential"] = key
            self._credential_generation += 1

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.client.aclose()


class HttpConversation:
    """One conversation with the agent: its session id, one request per turn."""

    def __init__(self, agent: HttpAgent, flow_id: str) -> None:
        self.agent = agent
        self.flow_id = flow_id
        self.session_id: str | None = None
        self.conversation_id = uuid.uuid4().hex

    def values(self, turn: int | None, message: str) -> dict[str, str]:
        """The turn values a template may use."""
        return {
            "message": message,
            "session_id": self.session_id or "",
            "flow_id": self.flow_id,
            "conversation_id": self.conversation_id,
            "turn": str(turn or ""),
        }

    async def turn(self, index: int, message: str, history: list[dict[str, str]]) -> TargetAnswer:
        """Send the user's message; the agent's events, timed, within the turn's deadline."""
        target = self.agent.target
        started = time.perf_counter()
        events: list[TurnEvent] = []
        first: float | None = None
        traceparent = new_traceparent()
        values = {**self.values(index, message), "traceparent": traceparent}
        budget = TurnBudget(target, self.agent.secrets)
        try:
            async with asyncio.timeout(target.timeout):
                response = await self.agent.stream(target.turn, values)
                try:
                    async for event in self._events(response, budget):
                        first = first if first is not None else time.perf_counter()
                        events.append(event)
                finally:
                    await response.aclose()
        except TimeoutError:
            raise TargetError(
                "timeout", f"no complete answer within {target.timeout:g} s", self.agent.secrets
            ) from None
        except httpx.HTTPError as exc:
            raise TargetError("connection", str(exc), self.agent.secrets) from None
        ttft = (first - started) * 1000 if first is not None and self._streamed else None
        answer = TargetAnswer(events, ttft, (time.perf_counter() - started) * 1000)
        answer.traceparent = traceparent
        return answer

    @property
    def _streamed(self) -> bool:
        return self.agent.target.answer.format == "sse"

    async def _events(
        self, response: httpx.Response, budget: TurnBudget
    ) -> AsyncIterator[TurnEvent]:
        answer = self.agent.target.answer
        if not isinstance(answer, JsonAnswer):
            async for event in sse_events(response, answer, budget):
                yield event
            return
        document = _json(await read_within(response, budget), self.agent.secrets)
        for event in json_events(document, answer):
            yield event

    async def close(self) -> None:
        """Tear the agent session down, when the target says how."""
        session = self.agent.target.session
        if session is None or session.teardown is None or self.session_id is None:
            return
        await self.agent.send(session.teardown, self.values(None, ""))


def new_traceparent() -> str:
    """A W3C traceparent of a new sampled trace: ``00-TRACE_ID-SPAN_ID-01``."""
    return f"00-{random_ids.token_hex(16)}-{random_ids.token_hex(8)}-01"


def json_events(document: Any, answer: JsonAnswer) -> list[TurnEvent]:
    """The turn events of a JSON answer, read at the paths the target file gives."""
    events = []
    offered = _at(document, answer.tools_offered)
    if offered is not MISSING:
        events.append(event_from("tools_offered", offered, EventPaths(tools="")))
    calls = _at(document, answer.tool_calls)
    for call in calls if isinstance(calls, list) else []:
        events.append(event_from("tool_start", call, answer.tool))
        events.append(event_from("tool_result", call, answer.tool))
    text = _at(document, answer.text)
    if text is not MISSING and text is not None:
        events.append(event_from("final_text", text, EventPaths(text="")))
    error = _at(document, answer.error)
    if error not in (MISSING, None, ""):
        events.append(event_from("error", error, EventPaths(message="")))
    tokens = {"input_tokens": answer.input_tokens, "output_tokens": answer.output_tokens}
    if any(tokens.values()):
        usage = {key: _at(document, path) for key, path in tokens.items()}
        events.append(event_from("usage", usage, EventPaths()))
    return events


def _at(document: Any, path: str | None) -> Any:
    return MISSING if path is None else at_path(document, path)


def _json(body: bytes, secrets: tuple[str, ...]) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        shown = body[:200].decode(errors="replace")
        raise TargetError("malformed_answer", f"not JSON: {shown!r}", secrets) from None


async def _start_of(response: httpx.Response) -> bytes:
    """The first ``ERROR_BODY_BYTES`` of an answer (an error's message), the rest unread."""
    start = b""
    async for chunk in response.aiter_bytes():
        start += chunk[: ERROR_BODY_BYTES - len(start)]
        if len(start) >= ERROR_BODY_BYTES:
            break
    return start
