"""How much of a live agent's answer one turn may take: events, bytes, and bytes of one event.

An agent that streams without end (a loop of token events within its turn deadline, a line that
never ends, a body that inflates to gigabytes) would otherwise fill the memory, the run's files
and its page. An answer is counted as it is decoded, before it is parsed, so nothing past a cap
is ever held: the turn ends as a transport error instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

from agent_backtest.simulate.targets.config import HttpTarget
from agent_backtest.simulate.targets.errors import TargetError

# A blank line ends a server-sent event, whichever of the three line ends the agent writes: a
# line end followed by a CR is always one (``\n\r`` ends the blank line there, or one byte later
# when an LF follows).
EVENT_ENDS = (b"\n\n", b"\r\r", b"\n\r\n", b"\n\r")
# What a counted copy of an answer must not carry over: its bytes are decoded already, and
# their number is no longer the one the agent sent.
DECODED_AWAY = (b"content-encoding", b"content-length")


class TurnBudget:
    """What is left of one turn's caps (the target's ``max_turn_events``, ``max_turn_bytes``
    and ``max_answer_bytes``), spent as the answer arrives."""

    def __init__(self, target: HttpTarget, secrets: tuple[str, ...] = ()) -> None:
        self.target = target
        self.secrets = secrets
        self.events = 0
        self.turn_bytes = 0
        self.answer_bytes = 0  # since the last whole event: the one being read

    def take_bytes(self, size: int, after_event: int | None = None) -> None:
        """``size`` more decoded bytes of the answer, of which ``after_event`` follow the end of
        the last whole event in them (None: no event ended in them); past a cap, the turn's
        error."""
        self.turn_bytes += size
        self.answer_bytes = self.answer_bytes + size if after_event is None else after_event
        target = self.target
        if self.answer_bytes > target.max_answer_bytes:
            what = f"one answer passed {target.max_answer_bytes:,} bytes (decoded)"
            raise self._past("answer_too_large", what, "max_answer_bytes")
        if self.turn_bytes > target.max_turn_bytes:
            what = f"the turn's answer passed {target.max_turn_bytes:,} bytes (decoded)"
            raise self._past("turn_too_large", what, "max_turn_bytes")

    def take_event(self) -> None:
        """One more event kept for the turn; past ``max_turn_events``, the turn's error."""
        self.events += 1
        if self.events > self.target.max_turn_events:
            what = f"the turn sent more than {self.target.max_turn_events:,} events"
            raise self._past("turn_too_large", what, "max_turn_events")

    def _past(self, kind: str, what: str, setting: str) -> TargetError:
        """The error of a turn that went past the target's ``setting``."""
        return TargetError(kind, f"{what}: the target's {setting} is the cap", self.secrets)


async def read_within(response: httpx.Response, budget: TurnBudget) -> bytes:
    """A whole answer's decoded bytes, counted against ``budget`` as they arrive."""
    chunks = []
    async for chunk in response.aiter_bytes():
        budget.take_bytes(len(chunk))
        chunks.append(chunk)
    return b"".join(chunks)


def counted(response: httpx.Response, budget: TurnBudget) -> httpx.Response:
    """The same answer, its decoded bytes counted against ``budget`` as a reader (the SSE
    parser) takes them."""
    headers = [(k, v) for k, v in response.headers.raw if k.lower() not in DECODED_AWAY]
    return httpx.Response(
        response.status_code,
        headers=headers,
        stream=_CountedStream(response, budget),
        request=response.request,
    )


class _CountedStream(httpx.AsyncByteStream):
    """The decoded bytes of an open stream of events, each read counted before it is passed on:
    in all, and since the last event ended."""

    def __init__(self, response: httpx.Response, budget: TurnBudget) -> None:
        self.response = response
        self.budget = budget

    async def __aiter__(self) -> AsyncIterator[bytes]:
        tail = b""  # the end of the read before: an event's end may span two reads
        async for chunk in self.response.aiter_bytes():
            self.budget.take_bytes(len(chunk), after_event_end(tail, chunk))
            tail = (tail + chunk)[-2:]  # reads of one byte keep two
            yield chunk

    async def aclose(self) -> None:
        await self.response.aclose()


def after_event_end(tail: bytes, chunk: bytes) -> int | None:
    """How many bytes of ``chunk`` follow the last blank line (an event's end) in ``tail +
    chunk``; None when there is none."""
    joined = tail + chunk
    ends = [at + len(marker) for marker in EVENT_ENDS if (at := joined.rfind(marker)) >= 0]
    return len(joined) - max(ends) if ends else None
