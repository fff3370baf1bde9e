"""The call path against an HTTP server this project did not write: uvicorn (its h11 protocol)
serving a Starlette app. Its heads (``date``, ``server``, its own header order and casing) are
read by the plain path; its chunked and gzip answers go through h11 and the decoder; its
keep-alive connection carries every call."""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from agent_backtest.providers import wire

uvicorn = pytest.importorskip("uvicorn", reason="pip install 'agent-backtest[demo]'")
starlette = pytest.importorskip("starlette", reason="pip install 'agent-backtest[demo]'")

from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import Response, StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

from tests.providers.test_wire import ask as ask_counted  # noqa: E402

PEERS: list[int] = []


def completion(text: str) -> bytes:
    """A chat completion answering ``text``, padded past Starlette's gzip threshold."""
    answer = {
        "id": "chatcmpl-uvicorn",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text},
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        "system_fingerprint": "fp_" + "0" * 600,
    }
    return json.dumps(answer).encode()


async def asked(request: Request) -> str:
    """The last message's text, and the client's port noted."""
    assert request.client is not None
    PEERS.append(request.client.port)
    body = await request.json()
    return body["messages"][-1]["content"]


async def sized(request: Request) -> Response:
    return Response(completion(f"sized: {await asked(request)}"), media_type="application/json")


async def chunked(request: Request) -> StreamingResponse:
    data = completion(f"chunked: {await asked(request)}")

    async def pieces() -> AsyncIterator[bytes]:
        for start in range(0, len(data), 97):
            yield data[start : start + 97]

    return StreamingResponse(pieces(), media_type="application/json")


async def gzipped(request: Request) -> Response:
    data = gzip.compress(completion(f"gzipped: {await asked(request)}"))
    headers = {"content-encoding": "gzip"}
    return Response(data, media_type="application/json", headers=headers)


APP = Starlette(
    routes=[
        Route(f"/{way}/v1/chat/completions", endpoint, methods=["POST"])
        for way, endpoint in (("sized", sized), ("chunked", chunked), ("gzipped", gzipped))
    ]
)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The app served by uvicorn on 127.0.0.1, from a thread."""
    config = uvicorn.Config(APP, host="127.0.0.1", port=0, http="h11", log_level="error")
    served = uvicorn.Server(config)
    thread = threading.Thread(target=served.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not served.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.01)
    port = served.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        served.should_exit = True
        thread.join(timeout=10)


def ask(url: str, *texts: str) -> list[tuple[str | None, str | None]]:
    """(answer text, error kind) of each text asked in turn over one provider."""
    return [(text, kind) for text, kind, _ in ask_counted(url, *texts)]


@pytest.fixture
def heads(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For each answer, whether the plain path read its head (False: handed to h11)."""
    taken: list[bool] = []
    plain_answer = wire.plain_answer

    def noting(*args: object) -> wire.Answer | None:
        answer = plain_answer(*args)  # type: ignore[arg-type]
        taken.append(answer is not None)
        return answer

    monkeypatch.setattr(wire, "plain_answer", noting)
    return taken


@pytest.mark.parametrize("way", ["sized", "chunked", "gzipped"])
def test_uvicorn_answers_read_on_one_kept_connection(
    server: str, way: str, heads: list[bool]
) -> None:
    PEERS.clear()
    assert ask(f"{server}/{way}/v1", "one", "two", "three") == [
        (f"{way}: one", None),
        (f"{way}: two", None),
        (f"{way}: three", None),
    ]
    assert len(set(PEERS)) == 1  # every call on the connection the first one opened
    # uvicorn's sized heads are plain; a chunked one has no length, so h11 frames it
    assert heads == [way != "chunked"] * 3
