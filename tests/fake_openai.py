"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks, with faults.

It answers ``POST /v1/chat/completions`` deterministically from the request (the same request
always gets the same answer), after an optional fixed latency. ``hold`` keeps the answers to
later requests back until ``release``, so a test can keep a client's run going for exactly as
long as it needs, without a latency to guess (a held request whose client is gone by then is
dropped uncounted). A script of faults per request
lets a test make chosen requests fail: ``429`` (with ``Retry-After``), ``500``, ``401``,
``slow`` (past the client's timeout), ``reset`` (connection reset), ``malformed`` (not JSON),
``trickle`` (the answer one byte every ``trickle_seconds``; ``trickled`` counts the bytes out
before the client hung up), ``stall`` (half the answer, then silence for ``slow_seconds``),
``user_role`` (a 200 whose message is the user's) and ``empty`` (an assistant message with
neither content nor tool calls). Requests are keyed by the text of their last message;
``fault`` is the behaviour of every attempt that no script names (a server that is down).
``ignores_tools=True`` answers in text whatever tools are offered, as some servers do;
``reply`` gives the text of every answer from the request (a scripted judge), or the whole
assistant message as a dict (a scripted agent model that calls tools).

``strict=True`` checks every body the way hosted chat-completions APIs do and answers 400 for
what they refuse: a body field the API does not know, a message field its role does not take,
a content part its role cannot carry, and a tool message without a ``tool_call_id`` that
answers a call of the assistant message before it.
"""

from __future__ import annotations

import hashlib
import json
import socket
import struct
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.servers import serve_in_thread, stop_serving


class _Server(ThreadingHTTPServer):
    """The standard threading server with a listen backlog for bursts of 64+ connections."""

    request_queue_size = 256


class FakeOpenAI:
    """The server, its fault script and what it saw; use as a context manager."""

    def __init__(
        self,
        latency: float = 0.0,
        slow_seconds: float = 5.0,
        api_key: str | None = None,
        ignores_tools: bool = False,
        strict: bool = False,
        reply: Callable[[dict[str, Any]], str | dict[str, Any]] | None = None,
        fault: str = "ok",
    ) -> None:
        self.fault = fault
        self.ignores_tools = ignores_tools
        self.reply = reply  # every answer's text or message, from the request (scripted)
        self.strict = strict
        self.refusals: list[str] = []
        self.latency = latency
        self.slow_seconds = slow_seconds
        self.api_key = api_key
        self.trickle_seconds = 0.05
        self.trickled: Counter[str] = Counter()
        self.faults: dict[str, list[str]] = {}
        self.requests: Counter[str] = Counter()
        self.arrivals: defaultdict[str, list[float]] = defaultdict(list)
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.total = 0
        self.first_arrival: float | None = None
        self.last_answer: float | None = None
        self._lock = threading.Lock()
        self._arrived = 0
        self._held_after: int | None = None
        self._released = threading.Event()
        self._released.set()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        serve_in_thread(self._server)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()  # a held request is answered, not left hanging
        stop_serving(self._server)

    @property
    def arrived(self) -> int:
        """Requests received so far, held ones included (``total`` counts them once answered)."""
        with self._lock:
            return self._arrived

    def hold(self, after: int = 0) -> None:
        """Answer ``after`` more requests, then keep every later one waiting until ``release``."""
        with self._lock:
            self._held_after = self._arrived + after
            self._released.clear()

    def release(self) -> None:
        """Answer the requests held back, and every later one as it comes."""
        with self._lock:
            self._held_after = None
            self._released.set()

    def _wait_if_held(self, connection: socket.socket) -> bool:
        """Wait while held; False when the client hung up meanwhile (a killed process): such a
        request is never answered nor counted, as no provider bills a call nobody received."""
        with self._lock:
            self._arrived += 1
            held = self._held_after is not None and self._arrived > self._held_after
        if not held:
            return True
        self._released.wait()
        try:
            return connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
        except BlockingIOError:  # nothing more to read: the client is still waiting
            return True
        except OSError:
            return False

    def fault_for(self, key: str) -> str:
        """The behaviour of this attempt of request ``key``, and count the attempt."""
        with self._lock:
            attempt = self.requests[key]
            self.requests[key] += 1
            self.total += 1
            self.arrivals[key].append(time.monotonic())
            if self.first_arrival is None:
                self.first_arrival = self.arrivals[key][-1]
            script = self.faults.get(key, [])
            return script[attempt] if attempt < len(script) else self.fault

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # The headers and the body are two writes: with Nagle's algorithm the body waits
            # for the client's delayed ACK of the headers, 40 ms on every answer.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                if not server._wait_if_held(self.connection):
                    self.close_connection = True
                    return
                key = request_key(body)
                with server._lock:
                    server.bodies.append(body)
                    server.headers.append(dict(self.headers.items()))
                if server.api_key and self.headers.get("authorization") != (
                    f"Bearer {server.api_key}"
                ):
                    server.fault_for(key)
                    return self._send(401, {"error": {"message": "invalid key"}})
                problem = strict_problem(body) if server.strict else None
                if problem is not None:
                    with server._lock:
                        server.refusals.append(problem)
                    server.fault_for(key)
                    return self._send(400, {"error": {"message": problem}})
                behaviour = server.fault_for(key)
                if server.latency:
                    time.sleep(server.latency)
                self._behave(behaviour, body, key)

            def _behave(self, behaviour: str, body: dict[str, Any], key: str) -> None:
                if behaviour == "429":
                    return self._send(
                        429, {"error": {"message": "slow down"}}, {"retry-after": "1"}
                    )
                if behaviour == "500":
                    return self._send(500, {"error": {"message": "boom"}})
                if behaviour == "401":
                    return self._send(401, {"error": {"message": "expired"}})
                if behaviour == "slow":
                    time.sleep(server.slow_seconds)
                elif behaviour == "reset":
                    # SO_LINGER 0: closing sends a TCP reset instead of a clean end.
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                    )
                    self.connection.close()
                    self.close_connection = True
                    return None
                elif behaviour == "malformed":
                    return self._send_raw(200, b'{"choices": [{"message": ')
                elif behaviour in ("trickle", "stall"):
                    return self._dribble(
                        behaviour, json.dumps(answer(body, server.ignores_tools)).encode(), key
                    )
                elif behaviour in ("user_role", "empty"):
                    wrong = answer(body, server.ignores_tools)
                    message = wrong["choices"][0]["message"]
                    if behaviour == "user_role":
                        message["role"] = "user"
                    else:
                        message.update(content=None, tool_calls=None)
                    return self._send(200, wrong)
                if server.reply is not None:
                    return self._send(200, text_answer(body, server.reply(body)))
                return self._send(200, answer(body, server.ignores_tools))

            def _dribble(self, behaviour: str, data: bytes, key: str) -> None:
                """The headers at once, then the body a byte at a time (``trickle``), or half of
                it and silence (``stall``)."""
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                try:
                    if behaviour == "stall":
                        self.wfile.write(data[: len(data) // 2])
                        self.wfile.flush()
                        time.sleep(server.slow_seconds)
                        return
                    for byte in data:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        with server._lock:
                            server.trickled[key] += 1
                        time.sleep(server.trickle_seconds)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

            def _send(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                self._send_raw(status, json.dumps(payload).encode(), headers)

            def _send_raw(
                self, status: int, data: bytes, headers: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True
                with server._lock:
                    server.last_answer = time.monotonic()

        return Handler


# What the hosted chat-completions API takes, written from its reference, independently of the
# client's own allow-list so that a test against this server can fail.
BODY_FIELDS = {
    "model", "messages", "tools", "tool_choice", "temperature", "top_p", "n", "stop",
    "max_tokens", "max_completion_tokens", "presence_penalty", "frequency_penalty",
    "logit_bias", "logprobs", "top_logprobs", "response_format", "seed", "user",
    "parallel_tool_calls", "reasoning_effort", "service_tier", "store", "metadata",
    "modalities", "audio", "prediction", "verbosity", "web_search_options",
    "prompt_cache_key", "safety_identifier", "stream", "stream_options",
}  # fmt: skip
MESSAGE_FIELDS = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "tool_calls", "refusal", "audio"},
    "tool": {"role", "content", "tool_call_id"},
}
PART_TYPES = {
    "system": {"text"},
    "developer": {"text"},
    "user": {"text", "image_url", "input_audio", "file"},
    "assistant": {"text", "refusal"},
    "tool": {"text"},
}


def strict_problem(body: dict[str, Any]) -> str | None:
    """Why a hosted API would refuse this body, or None when it would take it."""
    unknown = sorted(set(body) - BODY_FIELDS)
    if unknown:
        return f"Unrecognized request argument supplied: {unknown[0]}"
    open_calls: set[str] = set()
    for index, message in enumerate(body.get("messages", [])):
        role = message.get("role")
        if role not in MESSAGE_FIELDS:
            return f"messages[{index}]: invalid role {role!r}"
        extra = sorted(set(message) - MESSAGE_FIELDS[role])
        if extra:
            return f"messages[{index}]: unknown field {extra[0]!r} for role {role}"
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if part.get("type") not in PART_TYPES[role]:
                    return f"messages[{index}]: a {part.get('type')} part in a {role} message"
        if role == "assistant":
            open_calls = {call["id"] for call in message.get("tool_calls") or [] if "id" in call}
            if len(open_calls) != len(message.get("tool_calls") or []):
                return f"messages[{index}]: a tool call without an id"
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if not call_id:
                return f"messages[{index}]: a tool message needs tool_call_id"
            if call_id not in open_calls:
                return f"messages[{index}]: tool_call_id {call_id!r} answers no preceding call"
        else:
            open_calls = set()
    return None


def request_key(body: dict[str, Any]) -> str:
    """What identifies a request for the fault script: the text of its last message."""
    last = body["messages"][-1]
    content = last.get("content")
    return content if isinstance(content, str) else json.dumps(content)


def text_answer(body: dict[str, Any], reply: str | dict[str, Any]) -> dict[str, Any]:
    """A chat completion whose message is the text ``reply``, or the message ``reply``."""
    message = {"role": "assistant", "content": reply} if isinstance(reply, str) else reply
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-reply",
        "object": "chat.completion",
        "model": body.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": len(json.dumps(body)) // 4, "completion_tokens": 12},
    }


def answer(body: dict[str, Any], ignores_tools: bool = False) -> dict[str, Any]:
    """A deterministic answer: a tool call when tools are offered (unless the server ignores
    them, as some do), else text."""
    prompt_tokens = len(json.dumps(body)) // 4
    digest = hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).hexdigest()
    if body.get("tools") and not ignores_tools:
        tool = body["tools"][int(digest, 16) % len(body["tools"])]["function"]["name"]
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{digest[:12]}",
                    "type": "function",
                    "function": {"name": tool, "arguments": json.dumps({"ref": digest[:8]})},
                }
            ],
        }
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": f"answer {digest[:16]}"}
        finish = "stop"
    return {
        "id": f"chatcmpl-{digest[:10]}",
        "object": "chat.completion",
        "model": body.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 12,
            "total_tokens": prompt_tokens + 12,
        },
    }


def main() -> None:
    """Serve until stdin closes: ``python -m tests.fake_openai --latency 1`` prints its URL,
    and at the end how many requests it answered and the seconds from the first to the last."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="fake OpenAI-compatible server")
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    with FakeOpenAI(latency=args.latency) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()
        window = None
        if server.first_arrival is not None and server.last_answer is not None:
            window = server.last_answer - server.first_arrival
        print(json.dumps({"requests": server.total, "seconds": window}), flush=True)


if __name__ == "__main__":
    main()
