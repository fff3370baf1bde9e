"""HTTP/1.1 over asyncio streams to one origin: keep-alive connections, a request written in one
piece, and an answer's body read and decoded as it arrives.

This is the hot path of a replay: a general client (httpx over httpcore, anyio and h11) spends
more than ten times the CPU of the bytes themselves on each call, in layers a JSON POST to one
endpoint never needs. What is kept of HTTP/1.1 is what servers answer with: a ``Content-Length``
body, a chunked one, one that ends when the connection closes, informational ``1xx`` heads
skipped, and ``gzip`` or ``deflate`` content decoded in bounded pieces, so a compressed bomb is
never inflated whole.

Every read waits at most ``gap`` seconds for bytes (:class:`Stalled` past it); a broken answer is
a :class:`ProtocolError`; socket failures are ``OSError`` as asyncio raises them.
"""

from __future__ import annotations

import asyncio
import select
import ssl
import zlib
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import urlsplit

PIECE = 64 * 1024  # the most bytes taken from the socket, or out of a decoder, at once
HEAD_LIMIT = 64 * 1024  # an answer's status line and headers together
ACCEPT_ENCODING = "gzip, deflate"

T = TypeVar("T")


class ProtocolError(Exception):
    """The server's bytes are not an HTTP/1.1 answer (or the request cannot be written as one)."""


class Stalled(Exception):
    """No byte of the answer arrived within the read gap."""


class ConnectFailed(OSError):
    """The connection could not be opened."""


@dataclass
class Connection:
    """One keep-alive connection to the origin."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    reusable: bool = False
    """Set once an answer was read to its end on a connection the server keeps open."""

    def is_open(self) -> bool:
        """Whether the server has not hung up since the last answer: an idle connection with
        bytes to read has been closed by the server (or holds bytes no request asked for). The
        socket is asked itself, since the event loop may not have run since the hang-up (not
        under TLS, whose own records, such as session tickets, may wait there unread)."""
        if self.reader.at_eof() or self.writer.is_closing():
            return False
        if self.writer.get_extra_info("sslcontext") is not None:
            return True
        sock = self.writer.get_extra_info("socket")
        return sock is None or not select.select([sock], [], [], 0)[0]

    def close(self) -> None:
        """Hang up (without waiting for the peer)."""
        self.writer.close()


@dataclass
class Answer:
    """An answer's status, its headers (names in lower case) and its body, still to be read."""

    status: int
    headers: dict[str, str]
    connection: Connection = field(repr=False)
    gap: float = field(repr=False)

    async def decoded(self) -> AsyncIterator[bytes]:
        """The body as it arrives, after its content encodings are undone, in pieces of at most
        ``PIECE`` bytes."""
        decoders = content_decoders(self.headers.get("content-encoding", ""))
        async for piece in self._raw():
            for out in undo(decoders, piece):
                yield out
        for index, decoder in enumerate(decoders):  # what each decoder held, through the rest
            for out in undo(decoders[index + 1 :], decoder.finish()):
                yield out

    async def _raw(self) -> AsyncIterator[bytes]:
        """The body as sent, framed as the headers say; marks the connection reusable when the
        whole body was read and the server keeps the connection open."""
        reader = self.connection.reader
        if self.status in (204, 304):
            self.connection.reusable = self.headers.get("connection", "").lower() != "close"
            return
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            try:
                async for piece in self._chunked(reader):
                    yield piece
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                raise ProtocolError("the server broke off a chunked answer") from None
        elif "content-length" in self.headers:
            async for piece in self._sized(reader, content_length(self.headers)):
                yield piece
        else:  # the body ends when the server closes the connection
            while piece := await read_within(reader.read(PIECE), self.gap):
                yield piece
            return
        self.connection.reusable = self.headers.get("connection", "").lower() != "close"

    async def _sized(self, reader: asyncio.StreamReader, size: int) -> AsyncIterator[bytes]:
        while size > 0:
            piece = await read_within(reader.read(min(size, PIECE)), self.gap)
            if not piece:
                raise ProtocolError("the server closed the connection before the answer's end")
            size -= len(piece)
            yield piece

    async def _chunked(self, reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
        while True:
            line = await read_within(reader.readuntil(b"\r\n"), self.gap)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise ProtocolError(f"a bad chunk size line {line[:40]!r}") from None
            if size == 0:
                while await read_within(reader.readuntil(b"\r\n"), self.gap) != b"\r\n":
                    pass  # trailers, unused
                return
            async for piece in self._sized(reader, size):
                yield piece
            if await read_within(reader.readexactly(2), self.gap) != b"\r\n":
                raise ProtocolError("a chunk does not end with CRLF")


class Http11Pool:
    """At most ``size`` keep-alive connections to the origin of ``base_url``; a call waits for
    one to be free. ``tls`` is the context for an ``https`` origin (None for plain http)."""

    def __init__(self, base_url: str, size: int, tls: ssl.SSLContext | None) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.authority = parts.netloc.rsplit("@", 1)[-1]
        self.base_path = parts.path.rstrip("/")
        self.tls = tls if parts.scheme == "https" else None
        self._idle: list[Connection] = []
        self._free = asyncio.Semaphore(max(1, size))

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """A connection for one request and answer: a free idle one, else a new one. It goes
        back to the idle ones only when its answer was read whole and it is still open."""
        async with self._free:
            connection = self._take_idle() or await self._open()
            connection.reusable = False
            try:
                yield connection
            finally:
                if connection.reusable and connection.is_open():
                    self._idle.append(connection)
                else:
                    connection.close()

    def _take_idle(self) -> Connection | None:
        while self._idle:
            connection = self._idle.pop()
            if connection.is_open():
                return connection
            connection.close()
        return None

    async def _open(self) -> Connection:
        try:
            reader, writer = await asyncio.open_connection(
                self.host,
                self.port,
                ssl=self.tls,
                server_hostname=self.host if self.tls else None,
                limit=HEAD_LIMIT,
            )
        except OSError as exc:
            raise ConnectFailed(f"{self.authority}: {exc}") from None
        return Connection(reader, writer)

    def request_head(self, path: str, headers: dict[str, str], length: int) -> bytes:
        """The request line and headers of a POST of ``length`` bytes to ``path``."""
        lines = [f"POST {self.base_path}{path} HTTP/1.1", f"host: {self.authority}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines += [f"accept-encoding: {ACCEPT_ENCODING}", f"content-length: {length}", "", ""]
        head = "\r\n".join(lines)
        if head.count("\n") != len(lines) - 1 or "\r" in head.replace("\r\n", ""):
            raise ProtocolError("a request header holds a line break")
        return head.encode("latin-1")

    def close(self) -> None:
        """Hang up every idle connection."""
        for connection in self._idle:
            connection.close()
        self._idle.clear()


async def exchange(connection: Connection, request: bytes, gap: float) -> Answer:
    """Write ``request`` whole and read the head of its answer (after any ``1xx`` ones)."""
    connection.writer.write(request)
    await connection.writer.drain()
    while True:
        try:
            head = await read_within(connection.reader.readuntil(b"\r\n\r\n"), gap)
        except asyncio.IncompleteReadError as exc:
            raise ProtocolError(
                "the server closed the connection without an answer"
                if not exc.partial
                else "the server closed the connection inside the answer's head"
            ) from None
        except asyncio.LimitOverrunError:
            raise ProtocolError(f"the answer's head passed {HEAD_LIMIT:,} bytes") from None
        status, headers = parse_head(head)
        if not 100 <= status < 200:
            return Answer(status, headers, connection, gap)


async def read_within(read: Awaitable[T], gap: float) -> T:
    """``await read``, given up as :class:`Stalled` after ``gap`` seconds without it ending."""
    try:
        async with asyncio.timeout(gap):
            return await read
    except TimeoutError:
        raise Stalled from None


def parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    """(status, headers with lower-case names) of an answer's head; repeated headers joined."""
    status_line, *lines = head.decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise ProtocolError(f"not an HTTP/1.1 status line: {status_line[:60]!r}")
    headers: dict[str, str] = {}
    for line in lines:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon:
            raise ProtocolError(f"a header line without a colon: {line[:60]!r}")
        name = name.strip().lower()
        value = value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    if parts[0] == "HTTP/1.0" and "keep-alive" not in headers.get("connection", "").lower():
        headers["connection"] = "close"
    return int(parts[1]), headers


def content_length(headers: dict[str, str]) -> int:
    """The body's declared size (repeated equal values allowed, as RFC 9110 does)."""
    values = {value.strip() for value in headers["content-length"].split(",")}
    if len(values) != 1 or not (value := values.pop()).isdigit():
        raise ProtocolError(f"a bad content-length {headers['content-length'][:40]!r}")
    return int(value)


class Inflater:
    """Undoes one ``gzip`` or ``deflate`` encoding, in pieces of at most ``PIECE`` bytes, so a
    small compressed read never becomes one huge decoded one."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._fed = False
        wbits = zlib.MAX_WBITS | 16 if encoding in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self._decoder = zlib.decompressobj(wbits)

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of ``data``."""
        try:
            while data:
                out = self._decoder.decompress(data, PIECE)
                self._fed = True
                if out:
                    yield out
                data = self._decoder.unconsumed_tail
        except zlib.error as exc:
            if self.encoding == "deflate" and not self._fed:  # raw deflate, without zlib's header
                self._decoder = zlib.decompressobj(-zlib.MAX_WBITS)
                self._fed = True
                yield from self.feed(data)
                return
            raise ProtocolError(f"the {self.encoding} body does not decode: {exc}") from None

    def finish(self) -> bytes:
        """What the decoder still holds at the end of the body."""
        return self._decoder.flush()


def undo(decoders: list[Inflater], data: bytes) -> Iterator[bytes]:
    """``data`` through each decoder in turn, lazily: one piece at a time at every stage, so the
    reader can stop at its cap before a bomb's next piece is inflated."""
    stream: Iterator[bytes] = iter((data,) if data else ())
    for decoder in decoders:
        stream = (out for piece in stream for out in decoder.feed(piece))
    return stream


def content_decoders(encodings: str) -> list[Inflater]:
    """The decoders that undo ``encodings`` (a ``Content-Encoding`` value), last applied first;
    an encoding this client never asks for is left as it is (the body then reads as not JSON)."""
    names = [name.strip().lower() for name in encodings.split(",") if name.strip()]
    return [Inflater(name) for name in reversed(names) if name in ("gzip", "x-gzip", "deflate")]
