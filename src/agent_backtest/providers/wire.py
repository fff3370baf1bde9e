"""HTTP/1.1 over asyncio streams to one origin: keep-alive connections, a request written in one
piece, and an answer's body read and decoded as it arrives.

This is the hot path of a replay: a general client (httpx over httpcore and anyio) spends more
than ten times the CPU of the bytes themselves on each call, in layers a JSON POST to one endpoint
never needs. Here the sockets, the pool and the decoding are this module's own, and the
protocol is h11's: it writes the request, reads the status line and headers, frames the body (a
``Content-Length``, chunks with their extensions and trailers, or the connection's close), skips
informational ``1xx`` heads and says whether the connection may carry the next request.
``gzip`` and ``deflate`` content is decoded in bounded pieces, so a compressed bomb is never
inflated whole.

Every read waits at most ``gap`` seconds for bytes (:class:`Stalled` past it); a broken answer is
a :class:`ProtocolError`; socket failures are ``OSError`` as asyncio raises them.
"""

from __future__ import annotations

import asyncio
import select
import ssl
import zlib
from collections.abc import AsyncIterator, Awaitable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import urlsplit

import h11

PIECE = 64 * 1024  # the most bytes taken from the socket, or out of a decoder, at once
HEAD_LIMIT = 64 * 1024  # bytes of an answer's head h11 holds while it is still incomplete
ACCEPT_ENCODING = "gzip, deflate"

T = TypeVar("T")


class ProtocolError(Exception):
    """The server's bytes are not an HTTP/1.1 answer (or the request cannot be written as one)."""


class Stalled(Exception):
    """No byte of the answer arrived within the read gap."""


class ConnectError(OSError):
    """The connection could not be opened (named as httpx names it: the name begins the error
    detail of a call that fails so)."""


class StaleConnection(Exception):
    """A kept connection turned out closed by the server (its idle timeout met the request on
    the wire): not one byte of an answer came, so the request goes again on a new connection,
    as every keep-alive client does."""


@dataclass(frozen=True)
class Request:
    """A POST ready to be written: its line and headers, and its body."""

    head: h11.Request
    body: bytes


@dataclass
class Connection:
    """One keep-alive connection to the origin, with h11's state of its current exchange."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    protocol: h11.Connection = field(
        default_factory=lambda: h11.Connection(h11.CLIENT, max_incomplete_event_size=HEAD_LIMIT)
    )
    reusable: bool = False
    """Set once an answer was read to its end on a connection the server keeps open."""
    kept: bool = False
    """Taken from the idle ones: it answered before, and the server may have hung up since."""

    def ended(self) -> bool:
        """Whether the connection is known to be over, as the event loop saw it last: the
        server's end of the stream was read, or the connection is closing."""
        return self.reader.at_eof() or self.writer.is_closing()

    def is_open(self) -> bool:
        """Whether the server has not hung up since the last answer: an idle connection with
        bytes to read has been closed by the server (or holds bytes no request asked for). The
        socket is asked itself, since the event loop may not have run since the hang-up (not
        under TLS, whose own records, such as session tickets, may wait there unread)."""
        if self.ended():
            return False
        if self.writer.get_extra_info("sslcontext") is not None:
            return True
        sock = self.writer.get_extra_info("socket")
        return sock is None or not select.select([sock], [], [], 0)[0]

    def close(self) -> None:
        """Hang up (without waiting for the peer)."""
        self.writer.close()

    async def next_event(self, gap: float) -> h11.Event | type[h11.PAUSED]:
        """h11's next event of the answer, reading from the socket as it needs bytes; a broken
        answer raises h11's ``RemoteProtocolError``."""
        while (event := self.protocol.next_event()) is h11.NEED_DATA:
            self.protocol.receive_data(await read_within(self.reader.read(PIECE), gap))
        return event

    def finish_exchange(self) -> None:
        """Mark the connection reusable if both sides ended their messages, the server keeps
        it open and sent nothing past its answer; h11 is then ready for the next request."""
        protocol = self.protocol
        done = protocol.our_state is h11.DONE and protocol.their_state is h11.DONE
        if done and not protocol.trailing_data[0]:
            protocol.start_next_cycle()
            self.reusable = True

    def hung_up(self) -> bool:
        """Whether the server closed its side before the current answer ended."""
        return self.protocol.trailing_data[1]


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
        """The body as sent, framed by h11 as the headers say; marks the connection reusable
        when the whole body was read and the server keeps the connection open."""
        while True:
            try:
                event = await self.connection.next_event(self.gap)
            except h11.RemoteProtocolError as exc:
                raise ProtocolError(self._broken(exc)) from None
            if isinstance(event, h11.Data):
                yield event.data
            elif isinstance(event, h11.EndOfMessage):  # its trailers are not used
                self.connection.finish_exchange()
                return
            else:  # h11 has nothing else for a body it frames
                raise ProtocolError(f"an answer's body broken by {type(event).__name__}")

    def _broken(self, exc: h11.RemoteProtocolError) -> str:
        """What went wrong in the body, in words."""
        if not self.connection.hung_up():
            return f"a broken answer body: {exc}"
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            return "the server broke off a chunked answer"
        return "the server closed the connection before the answer's end"


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
    async def connection(self, fresh: bool = False) -> AsyncIterator[Connection]:
        """A connection for one request and answer: a free idle one (unless ``fresh``), else a
        new one. It goes back to the idle ones only when its answer was read whole and it has
        not ended; whether the server hung up since is asked of the socket when it is taken
        again (once per call, not twice)."""
        async with self._free:
            connection = (None if fresh else self._take_idle()) or await self._open()
            connection.reusable = False
            try:
                yield connection
            finally:
                if connection.reusable and not connection.ended():
                    self._idle.append(connection)
                else:
                    connection.close()

    def _take_idle(self) -> Connection | None:
        while self._idle:
            connection = self._idle.pop()
            if connection.is_open():
                connection.kept = True
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
            )
        except OSError as exc:
            raise ConnectError(f"{self.authority}: {exc}") from None
        return Connection(reader, writer)

    def request(self, path: str, headers: dict[str, str], body: bytes) -> Request:
        """A POST of ``body`` to ``path`` with ``headers`` (and the host, the encodings this
        client decodes and the body's length)."""
        fields = [("host", self.authority), *headers.items()]
        fields += [("accept-encoding", ACCEPT_ENCODING), ("content-length", str(len(body)))]
        try:
            head = h11.Request(method="POST", target=f"{self.base_path}{path}", headers=fields)
        except h11.LocalProtocolError as exc:
            detail = f"a request header holds a line break or a bad byte: {exc}"
            raise ProtocolError(detail) from None
        return Request(head, body)

    def close(self) -> None:
        """Hang up every idle connection."""
        for connection in self._idle:
            connection.close()
        self._idle.clear()


async def exchange(connection: Connection, request: Request, gap: float) -> Answer:
    """Write ``request`` whole and read the head of its answer (after any ``1xx`` ones); on a
    kept connection the server had closed, :class:`StaleConnection`."""
    try:
        return await _exchange(connection, request, gap)
    except (ConnectionResetError, BrokenPipeError, ProtocolError) as exc:
        received, closed = connection.protocol.trailing_data
        hung_up = not received and (closed or isinstance(exc, OSError))
        if connection.kept and hung_up:
            raise StaleConnection(str(exc)) from None
        raise


async def _exchange(connection: Connection, request: Request, gap: float) -> Answer:
    protocol = connection.protocol
    pieces = protocol.send_with_data_passthrough(request.head) or []
    pieces += protocol.send_with_data_passthrough(h11.Data(data=request.body)) or []
    pieces += protocol.send_with_data_passthrough(h11.EndOfMessage()) or []
    connection.writer.write(b"".join(pieces))  # one write: one segment for a small request
    await connection.writer.drain()
    while True:
        try:
            event = await connection.next_event(gap)
        except h11.RemoteProtocolError as exc:
            raise ProtocolError(broken_head(connection, exc)) from None
        if isinstance(event, h11.Response):
            return Answer(event.status_code, joined(event.headers), connection, gap)
        if not isinstance(event, h11.InformationalResponse):  # a 1xx is skipped
            raise ProtocolError(f"an answer's head broken by {type(event).__name__}")


def joined(fields: Sequence[tuple[bytes, bytes]]) -> dict[str, str]:
    """Headers by their (lower-case) names, a repeated header's values joined by commas."""
    headers: dict[str, str] = {}
    for name, value in fields:
        key, text = name.decode("latin-1"), value.decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return headers


def broken_head(connection: Connection, exc: h11.RemoteProtocolError) -> str:
    """What went wrong before the answer's head was read whole, in words."""
    if exc.error_status_hint == 431:  # h11's buffer passed its limit without a whole head
        return f"the answer's head passed {HEAD_LIMIT:,} bytes"
    received, closed = connection.protocol.trailing_data
    if closed:
        return (
            "the server closed the connection inside the answer's head"
            if received
            else "the server closed the connection without an answer"
        )
    return f"not an HTTP/1.1 answer: {exc}"


async def read_within(read: Awaitable[T], gap: float) -> T:
    """``await read``, given up as :class:`Stalled` after ``gap`` seconds without it ending."""
    try:
        async with asyncio.timeout(gap):
            return await read
    except TimeoutError:
        raise Stalled from None


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
