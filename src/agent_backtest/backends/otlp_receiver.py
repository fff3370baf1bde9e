"""An OTLP/HTTP trace receiver: what exporters send to ``/v1/traces``, appended to a file.

Bodies may be protobuf (``application/x-protobuf``) or OTLP/JSON (``application/json``), gzip
compressed or not. Each accepted request becomes one ``TracesData`` line of the file (see
:mod:`agent_backtest.backends.otlp_json`), which abt's OTLP reader takes as it is.

Memory stays bounded: a request longer than the size limit is refused (413) before its body is
read, a gzip body is inflated only up to the same limit, and at most ``MAX_IN_FLIGHT`` bodies
are held at one time (a request that waits too long for its turn gets 503, which exporters
retry). Stopping waits for the requests in flight to be written, so the file ends on a whole line.
"""

from __future__ import annotations

import errno
import socket
import threading
import zlib
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from agent_backtest.backends import DEFAULT_MAX_REQUEST_BYTES
from agent_backtest.backends.otlp_json import is_traces_data, request_as_json, span_count
from agent_backtest.backends.trace_file import TraceFile
from agent_backtest.errors import UserError

TRACES_PATH = "/v1/traces"
MAX_IN_FLIGHT = 4
TURN_WAIT_SECONDS = 30.0
SOCKET_TIMEOUT_SECONDS = 30.0
POLL_SECONDS = 0.05
PROTOBUF = "application/x-protobuf"
JSON = "application/json"


@dataclass
class ReceiverCounts:
    """What a receiver took in: requests and spans written, and requests refused by status."""

    requests: int = 0
    spans: int = 0
    refused: Counter[int] = field(default_factory=Counter)


class BodyError(Exception):
    """A request body that cannot be taken, with the HTTP status that says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def parse_listen(listen: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:4318`` for IPv6) as a host and a port number."""
    host, colon, port = listen.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not colon or not host or not port.isdigit() or int(port) > 65535:
        raise UserError(f"{listen!r} is not HOST:PORT, such as 127.0.0.1:4318", "listen")
    return host, int(port)


def decode_body(body: bytes, content_type: str, encoding: str, limit: int) -> dict[str, Any]:
    """The ``TracesData`` of one request body, as OTLP/JSON."""
    encoding = encoding.strip().lower()
    if encoding == "gzip":
        body = _gunzip(body, limit)
    elif encoding not in ("", "identity"):
        raise BodyError(415, f"content encoding {encoding!r} is not supported: send gzip or none")
    media = content_type.split(";")[0].strip().lower()
    if media == PROTOBUF:
        return _from_protobuf(body)
    if media == JSON:
        return _from_json(body)
    raise BodyError(415, f"content type {media!r} is not supported: send {PROTOBUF} or {JSON}")


def _gunzip(body: bytes, limit: int) -> bytes:
    """A gzip body inflated, refused once it grows past ``limit``."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        plain = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise BodyError(400, f"the body is not valid gzip ({exc})") from None
    if len(plain) > limit or inflater.unconsumed_tail:
        raise BodyError(413, f"the inflated body is larger than {limit} bytes")
    if not inflater.eof:
        raise BodyError(400, "the gzip body ends early")
    return plain


def _from_protobuf(body: bytes) -> dict[str, Any]:
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    message = ExportTraceServiceRequest()
    try:
        message.ParseFromString(body)
    except DecodeError as exc:
        raise BodyError(400, f"the body is not an ExportTraceServiceRequest ({exc})") from None
    return request_as_json(message)


def _from_json(body: bytes) -> dict[str, Any]:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BodyError(400, f"the body is not JSON ({exc})") from None
    if not is_traces_data(data):
        raise BodyError(400, 'expected OTLP/JSON {"resourceSpans": [{"scopeSpans": [...]}]}')
    return data


class OtlpReceiver:
    """An OTLP/HTTP server writing every accepted request to ``out``; ``start``, then ``stop``."""

    def __init__(
        self,
        host: str,
        port: int,
        out: Path,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ) -> None:
        self.counts = ReceiverCounts()
        self.max_request_bytes = max_request_bytes
        self.turns = threading.BoundedSemaphore(MAX_IN_FLIGHT)
        self.counts_lock = threading.Lock()
        self.server = _bind(host, port, self)
        try:
            self.file = TraceFile(out)
        except UserError:
            self.server.server_close()
            raise
        self.thread = threading.Thread(
            target=self.server.serve_forever, args=(POLL_SECONDS,), name="otlp-receiver"
        )

    @property
    def url(self) -> str:
        """Where exporters send traces, with the port actually bound."""
        host, port = self.server.server_address[:2]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}{TRACES_PATH}"

    def start(self) -> None:
        """Serve requests on a background thread."""
        self.thread.start()

    def stop(self) -> None:
        """Stop accepting requests, let those in flight be written, then close the file."""
        self.server.shutdown()
        self.server.server_close()  # joins the request threads (block_on_close)
        self.thread.join()
        self.file.close()

    def accept(self, data: dict[str, Any]) -> None:
        """Write one request's ``TracesData`` (a request without spans writes nothing)."""
        spans = span_count(data)
        if spans:
            self.file.append(data)
        with self.counts_lock:
            self.counts.requests += 1
            self.counts.spans += spans

    def refused(self, status: int) -> None:
        """Count one request refused with ``status``."""
        with self.counts_lock:
            self.counts.refused[status] += 1


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True
    receiver: OtlpReceiver


def _bind(host: str, port: int, receiver: OtlpReceiver) -> _Server:
    """The server bound to ``host:port``; a port in use or a host not here is a UserError."""
    server_class = _Server
    if ":" in host:
        server_class = type("_Server6", (_Server,), {"address_family": socket.AF_INET6})
    try:
        server = server_class((host, port), _Handler)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            why = "is in use: stop what listens there or choose another port"
        else:
            why = f"cannot be listened on ({exc.strerror or exc}): use an address of this machine"
        raise UserError(f"{host}:{port} {why}", "listen") from None
    server.receiver = receiver
    return server


class _Handler(BaseHTTPRequestHandler):
    """One request: checked, read within the limits, decoded and written."""

    server: _Server
    timeout = SOCKET_TIMEOUT_SECONDS
    server_version = "abt-collect"

    def do_POST(self) -> None:
        receiver = self.server.receiver
        if urlsplit(self.path).path != TRACES_PATH:
            self._refuse(404, f"only {TRACES_PATH} is served")
            return
        length = self.headers.get("Content-Length", "")
        if not length.isdigit():
            self._refuse(411, "send the body with a Content-Length")
            return
        if int(length) > receiver.max_request_bytes:
            self._refuse(413, f"the body is larger than {receiver.max_request_bytes} bytes")
            return
        if not receiver.turns.acquire(timeout=TURN_WAIT_SECONDS):
            self._refuse(503, "too many requests at once: retry")
            return
        try:
            body = self.rfile.read(int(length))
            if len(body) < int(length):
                self._refuse(400, "the body ends before its Content-Length")
                return
            data = decode_body(
                body,
                self.headers.get("Content-Type", ""),
                self.headers.get("Content-Encoding", ""),
                receiver.max_request_bytes,
            )
            receiver.accept(data)
        except BodyError as exc:
            self._refuse(exc.status, exc.message)
            return
        finally:
            receiver.turns.release()
        self._answer(200, self._success_body())

    def _success_body(self) -> tuple[str, bytes]:
        """An empty ``ExportTraceServiceResponse`` in the request's encoding."""
        if self.headers.get("Content-Type", "").split(";")[0].strip().lower() == PROTOBUF:
            return PROTOBUF, b""
        return JSON, b"{}"

    def _refuse(self, status: int, message: str) -> None:
        self.server.receiver.refused(status)
        self.close_connection = True  # the unread body must not be taken for the next request
        self._answer(status, ("text/plain; charset=utf-8", message.encode()))

    def _answer(self, status: int, body: tuple[str, bytes]) -> None:
        content_type, content = body
        self.send_response(status)
        if status == 503:
            self.send_header("Retry-After", "1")
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the command prints what was received when it stops."""
