"""The hosted providers' own HTTP/1.1 client against a real server on 127.0.0.1: every framing a
server answers with (a length, chunks, a close), gzip and raw deflate, informational heads,
keep-alive connections reused and a hung-up one never, and a broken answer a connection error.

The handler chooses its way of answering by the first part of the path (``/chunked/v1``).
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from agent_backtest.providers import CallPolicy, ModelClient
from agent_backtest.providers.config import ProviderSettings
from agent_backtest.providers.http import proxied
from agent_backtest.providers.openai import OpenAIProvider
from agent_backtest.providers.wire import Http11Pool, ProtocolError
from agent_backtest.trace import LLMRequest, Message
from tests.servers import serving

PEERS: list[int] = []  # the client port of each request, in order
RELAYED: list[str] = []  # the target of each request the proxy relayed
HEADS: list[dict[str, str]] = []  # the headers of each request, names in lower case


def answer_bytes(text: str) -> bytes:
    message = {"role": "assistant", "content": text}
    return json.dumps({"choices": [{"message": message, "finish_reason": "stop"}]}).encode()


# Answers written byte for byte, each followed by the server's hang-up.
RAW = {
    "http10": lambda data: b"HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n" + data,
    "cutchunk": lambda data: (
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n%x\r\n" % len(data) + data[:9]
    ),
    "hugehead": lambda data: b"HTTP/1.1 200 OK\r\nx-filler: " + b"f" * (200 * 1024) + b"\r\n\r\n",
    "halfhead": lambda data: b"HTTP/1.1 200 OK\r\ncontent-le",
    "nothing": lambda data: b"",
    "garbage": lambda data: b"SMTP ready\r\n\r\n",
}

# Answers written byte for byte on a connection the server keeps open.
KEPT = {
    "lfhead": lambda data: b"HTTP/1.1 200 OK\ncontent-length: %d\n\n" % len(data) + data,
    "folded": lambda data: (
        b"HTTP/1.1 200 OK\r\nx-note: one\r\n  two\r\ncontent-length: %d\r\n\r\n" % len(data) + data
    ),
    "sizedclose": lambda data: (
        b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: %d\r\n\r\n" % len(data) + data
    ),
    "extra": lambda data: (
        b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(data) + data + b"?"
    ),
}


class Framings(BaseHTTPRequestHandler):
    """Answers the last message's text back, framed as the path's first part says."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        PEERS.append(self.client_address[1])
        HEADS.append({name.lower(): value for name, value in self.headers.items()})
        way = self.path.split("/")[1]
        data = answer_bytes(f"{way}: {body['messages'][-1]['content']}")
        self.served = getattr(self, "served", 0) + 1
        if way == "dropkept" and self.served > 1:  # a kept connection's idle timeout, met
            self.close_connection = True
            return
        if way in RAW:
            self.wfile.write(RAW[way](data))
            self.close_connection = True
            return
        if way in KEPT:
            self.wfile.write(KEPT[way](data))
            return
        if way == "continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        self.send_response(200)
        self.send_header("content-type", "application/json")
        if way == "chunked":
            self._chunked(data)
        elif way == "deflate":
            packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)  # raw, no zlib header
            self._sized(packer.compress(data) + packer.flush(), encoding="deflate")
        elif way == "close":
            self.send_header("connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True
        elif way == "broken":
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:10])
            self.close_connection = True
        else:
            self._sized(data)
            self.close_connection = way == "hangup"  # closes without saying so

    def _sized(self, data: bytes, encoding: str | None = None) -> None:
        if encoding:
            self.send_header("content-encoding", encoding)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chunked(self, data: bytes) -> None:
        """The answer gzipped, in chunks of 7 bytes with an extension on the first."""
        packer = zlib.compressobj(6, zlib.DEFLATED, 31)
        packed = packer.compress(data) + packer.flush()
        self.send_header("content-encoding", "gzip")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for start in range(0, len(packed), 7):
            piece = packed[start : start + 7]
            extension = ";note=first" if start == 0 else ""
            self.wfile.write(f"{len(piece):x}{extension}\r\n".encode() + piece + b"\r\n")
        self.wfile.write(b"0\r\nx-trailer: ignored\r\n\r\n")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serving(Framings) as url:
        yield url


def ask(url: str, *texts: str) -> list[tuple[str | None, str | None, int]]:
    """(answer text, error kind, attempts) of each text asked in turn over one provider."""

    async def run() -> list[tuple[str | None, str | None, int]]:
        settings = ProviderSettings(type="openai", base_url=url)
        provider = OpenAIProvider("openai", settings, "sk-test-key", 2)
        client = ModelClient(provider, CallPolicy(timeout=5.0, max_retries=0))
        found = []
        for text in texts:
            request = LLMRequest(messages=[Message(role="user", content=text)])
            outcome = await client.generate(request, "m", 0)
            reply = outcome.response.message.text() if outcome.response else None
            kind = outcome.error.kind if outcome.error else None
            found.append((reply, kind, outcome.attempts))
        await provider.aclose()
        return found

    return asyncio.run(run())


@pytest.mark.parametrize("way", ["length", "chunked", "deflate", "continue", "close"])
def test_every_framing_and_encoding_reads_as_the_answer(server: str, way: str) -> None:
    assert ask(f"{server}/{way}/v1", "hello", "again") == [
        (f"{way}: hello", None, 1),
        (f"{way}: again", None, 1),
    ]


def test_a_request_says_what_it_takes_and_who_sends_it_unless_the_settings_say(
    server: str,
) -> None:
    HEADS.clear()
    ask(f"{server}/length/v1", "hello")
    (head,) = HEADS
    assert head["accept"] == "application/json"
    assert head["user-agent"].startswith("agent-backtest/")
    assert head["authorization"] == "Bearer sk-test-key"
    assert head["accept-encoding"] == "gzip, deflate"


def test_a_kept_connection_is_reused_and_a_hung_up_one_is_not(server: str) -> None:
    PEERS.clear()
    ask(f"{server}/length/v1", "one", "two", "three")
    assert len(set(PEERS)) == 1  # one connection for all three
    PEERS.clear()
    replies = ask(f"{server}/hangup/v1", "one", "two", "three")
    assert [kind for _, kind, _ in replies] == [None, None, None]
    assert [attempts for _, _, attempts in replies] == [1, 1, 1]  # no failed try on a dead one
    assert len(set(PEERS)) == 3


@pytest.mark.parametrize("way", ["lfhead", "folded"])
def test_a_head_h11_reads_its_own_way_is_read_as_it_reads_it(server: str, way: str) -> None:
    """Lines ended by a bare LF, a header folded over two lines: read at once, without waiting
    for bytes that never come, and the connection kept."""
    PEERS.clear()
    assert ask(f"{server}/{way}/v1", "one", "two") == [
        (f"{way}: one", None, 1),
        (f"{way}: two", None, 1),
    ]
    assert len(set(PEERS)) == 1


@pytest.mark.parametrize("way", ["sizedclose", "extra"])
def test_a_connection_the_answer_closes_or_overruns_is_never_reused(server: str, way: str) -> None:
    """An answer that says ``Connection: close``, or has bytes past its length: each next call
    goes on a new connection."""
    PEERS.clear()
    assert ask(f"{server}/{way}/v1", "one", "two") == [
        (f"{way}: one", None, 1),
        (f"{way}: two", None, 1),
    ]
    assert len(set(PEERS)) == 2


def test_a_kept_connection_the_server_closed_unanswered_is_tried_again_on_a_new_one(
    server: str,
) -> None:
    """The server keeps the connection, then closes it without answering the next request on
    it (its idle timeout met the request): the request goes again on a new connection, and the
    call neither fails nor counts a failed try."""
    PEERS.clear()
    replies = ask(f"{server}/dropkept/v1", "one", "two", "three")
    assert replies == [(f"dropkept: {text}", None, 1) for text in ("one", "two", "three")]
    assert len(PEERS) == 5  # "two" and "three" each reached a closed kept connection first
    assert len(set(PEERS)) == 3  # each answered on a connection of its own


def test_an_answer_cut_short_is_a_connection_error(server: str) -> None:
    ((reply, kind, _),) = ask(f"{server}/broken/v1", "hello")
    assert reply is None and kind == "connection"


def test_an_http10_answer_ends_with_the_close_and_its_connection_is_not_reused(
    server: str,
) -> None:
    PEERS.clear()
    assert ask(f"{server}/http10/v1", "one", "two") == [
        ("http10: one", None, 1),
        ("http10: two", None, 1),
    ]
    assert len(set(PEERS)) == 2


def error_detail(url: str) -> str:
    """The error detail of one call that fails."""

    async def run() -> str:
        settings = ProviderSettings(type="openai", base_url=url)
        provider = OpenAIProvider("openai", settings, "sk-test-key", 1)
        client = ModelClient(provider, CallPolicy(timeout=5.0, max_retries=0))
        request = LLMRequest(messages=[Message(role="user", content="hello")])
        outcome = await client.generate(request, "m", 0)
        await provider.aclose()
        assert outcome.response is None and outcome.error.kind == "connection"
        return outcome.error.detail

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("way", "detail"),
    [
        ("cutchunk", "the server broke off a chunked answer"),
        ("hugehead", "the answer's head passed 65,536 bytes"),
        ("halfhead", "the server closed the connection inside the answer's head"),
        ("nothing", "the server closed the connection without an answer"),
        ("garbage", "not an HTTP/1.1 answer"),
    ],
)
def test_a_broken_answer_says_where_it_broke(server: str, way: str, detail: str) -> None:
    assert detail in error_detail(f"{server}/{way}/v1")


def test_a_header_with_a_line_break_is_never_written() -> None:
    pool = Http11Pool("http://127.0.0.1:9/v1", 1, None)
    with pytest.raises(ProtocolError, match="line break"):
        pool.request("/chat/completions", {"x-note": "a\r\nx-injected: yes"}, b"{}")
    assert pool.request("/chat/completions", {"x-note": "fine"}, b"{}").target == (
        b"/v1/chat/completions"
    )


def test_an_endpoint_behind_a_proxy_of_the_environment_goes_through_httpx(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    assert not proxied("https://api.example.com/v1")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    assert proxied("https://api.example.com/v1")
    assert not proxied("http://api.example.com/v1")
    monkeypatch.setenv("NO_PROXY", "api.example.com")
    assert not proxied("https://api.example.com/v1")


class Relay(BaseHTTPRequestHandler):
    """A forward proxy for plain http: each request's absolute target fetched and relayed."""

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        RELAYED.append(self.path)
        body = self.rfile.read(int(self.headers["content-length"]))
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        forwarded = urllib.request.Request(self.path, body, {"content-type": "application/json"})
        with direct.open(forwarded) as answer:
            data = answer.read()
        self.send_response(200)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_a_call_through_a_proxy_of_the_environment_is_relayed_by_it(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serving(Relay) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy)
        monkeypatch.setenv("NO_PROXY", "")
        monkeypatch.delenv("no_proxy", raising=False)
        RELAYED.clear()
        assert ask(f"{server}/length/v1", "hello") == [("length: hello", None, 1)]
    assert RELAYED == [f"{server}/length/v1/chat/completions"]
