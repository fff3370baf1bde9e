"""Server-sent events of an agent's answer, turned into turn events by the target's mapping.

The stream is parsed by ``httpx-sse`` (the SSE line protocol: ``event:``, multi-line ``data:``,
comments, retries); this module only decides what each parsed event means.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import orjson
from httpx_sse import EventSource, ServerSentEvent, SSEError

from agent_backtest.simulate.targets.config import SseAnswer
from agent_backtest.simulate.targets.errors import TargetError
from agent_backtest.simulate.targets.events import MISSING, TurnEvent, at_path, event_from
from agent_backtest.simulate.targets.limits import TurnBudget, counted


async def sse_events(
    response: httpx.Response, answer: SseAnswer, budget: TurnBudget
) -> AsyncIterator[TurnEvent]:
    """The turn events of a streamed answer, until the stream ends or a ``done`` event; with
    an ``end`` event named, a stream that stops before it is ``stream_ended_early``. The
    answer's bytes and events are spent from ``budget`` as they arrive."""
    try:
        async for sse in EventSource(counted(response, budget)).aiter_sse():
            data = _data(sse)
            by_event = answer.type_from == "event"
            kind_name = sse.event if by_event else at_path(data, answer.type_from)
            mapping = answer.events.get(kind_name) if isinstance(kind_name, str) else None
            if answer.end is not None and answer.end in (kind_name, sse.data):
                if mapping is not None:  # the closing event may carry the usage
                    budget.take_event()
                    yield event_from(mapping.kind, data, mapping.paths())
                return
            if kind_name in answer.done or sse.data in answer.done:
                break
            if mapping is not None:  # other event types (pings, progress) carry no turn content
                budget.take_event()
                yield event_from(mapping.kind, data, mapping.paths())
    except SSEError as exc:
        raise TargetError("malformed_answer", str(exc)) from None
    if answer.end is not None:
        raise TargetError(
            "stream_ended_early",
            f"the answer stopped before its {answer.end!r} event: the turn is not complete",
        )


def _data(sse: ServerSentEvent) -> object:
    """An event's data: its JSON when it is JSON, else the text itself."""
    try:
        return orjson.loads(sse.data)
    except orjson.JSONDecodeError:
        return sse.data if sse.data else MISSING
