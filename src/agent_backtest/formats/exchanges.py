"""One recorded request/response pair of a model API as an :class:`Exchange`.

HTTP cassettes and request/response logs hold the same bodies: OpenAI chat completions
(``messages`` → ``choices``), the OpenAI Responses API (``input`` → ``output``) and Anthropic
Messages (``system`` + ``messages`` → ``content`` blocks). An answer may have been streamed: its
body is then server-sent events, assembled (see :mod:`agent_backtest.formats.streams`) into the
body an unstreamed call returns, and the exchange notes that production streamed.
"""

from __future__ import annotations

from typing import Any

from agent_backtest.errors import RecordError
from agent_backtest.formats import anthropic_messages, streams
from agent_backtest.formats.conversations import Exchange
from agent_backtest.formats.openai_responses import (
    is_responses_request,
    request_from_responses,
    response_from_responses,
)
from agent_backtest.trace.openai_wire import request_from_openai, response_from_openai

CHAT = streams.CHAT
RESPONSES = streams.RESPONSES
ANTHROPIC = streams.ANTHROPIC
# The endpoint paths of each API (a gateway may put a prefix before them).
API_PATHS = {
    "/chat/completions": CHAT,
    "/responses": RESPONSES,
    "/messages": ANTHROPIC,
}


def api_of_path(url_path: str) -> str | None:
    """The API an endpoint path belongs to, or None for any other endpoint."""
    path = url_path.rstrip("/")
    if "/threads/" in path:  # the Assistants API's thread messages and runs are no model call
        return None
    return next((api for suffix, api in API_PATHS.items() if path.endswith(suffix)), None)


def exchange(api: str | None, request: Any, response: Any) -> Exchange:
    """The exchange of a request body and its response body (parsed JSON or SSE text).

    ``api`` is known from the endpoint of an HTTP recording; a log line without one is told by
    its bodies (see :func:`api_of_bodies`).
    """
    answer, streamed_api, notes = answer_body(response)
    api = api or streamed_api or api_of_bodies(request, answer)
    if streamed_api is not None and streamed_api != api:
        raise RecordError("undecodable_body", f"a {streamed_api} stream answers a {api} request")
    if api == RESPONSES:
        parsed = request_from_responses(request)
        return Exchange(
            request=parsed.request,
            response=response_from_responses(answer),
            instructions=parsed.instructions,
            previous_response_id=parsed.previous_response_id,
            notes=parsed.notes + notes,
        )
    if api == ANTHROPIC:
        canonical, request_notes = anthropic_messages.request_from_messages(request)
        return Exchange(
            request=canonical,
            response=anthropic_messages.response_from_messages(answer),
            notes=request_notes + notes,
        )
    return Exchange(
        request=request_from_openai(request), response=response_from_openai(answer), notes=notes
    )


def api_of_bodies(request: Any, response: Any) -> str:
    """The API of a request and response, told by their keys: ``input`` is the Responses API,
    an answer of content blocks (``"type": "message"``) is Anthropic's, the rest chat
    completions."""
    if is_responses_request(request):
        return RESPONSES
    if (
        isinstance(response, dict)
        and response.get("type") == "message"
        and isinstance(response.get("content"), list)
    ):
        return ANTHROPIC
    return CHAT


def answer_body(response: Any) -> tuple[Any, str | None, list[str]]:
    """The response body as JSON, assembled first when it is a stream (its SSE text, or its
    events as a JSON list): (body, the stream's API or None when not streamed, notes)."""
    if isinstance(response, str) and streams.is_event_stream(response):
        streamed = streams.assemble(response)
    elif streams.is_event_list(response):
        streamed = streams.assemble_events(response)
    else:
        return response, None, []
    return streamed.body, streamed.api, [streamed.note]
