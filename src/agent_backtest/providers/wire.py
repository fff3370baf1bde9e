"""HTTP/1.1 over asyncio streams to one origin: keep-alive connections, a request written in one
piece, and an answer's body read and decoded as it arrives.

This is the hot path of a replay: a general client (httpx over httpcore and anyio) spends more
than ten times the CPU of the bytes themselves on each call, in layers a JSON POST to one endpoint
never needs. Here the sockets, the pool and the decoding are this module's own. A request's head
is checked by h11 once per set of headers and kept as bytes; each call adds only its length.

An answer is read in one of two ways. The plain one, what an API server sends nearly always (an
HTTP/1.1 head of well-formed lines, a final status and one ``Content-Length``), is read here
directly: the head split into its lines, the body taken by its length. Anything else (chunks, a
close-delimited body, an HTTP/1.0 or ``1xx`` head, a line h11 might read otherwise, a head that
never ends) is handed with the bytes read so far to h11, which frames the body (chunks with their
extensions and trailers, the connection's close), skips informational heads, says what is broken
and whether the connection may carry the next request. The plain path accepts only heads h11
reads the same way, so both give the same answer. ``gzip`` and ``deflate`` content is decoded in
bounded pieces, so a compressed bomb is never inflated whole.

Every read waits at most ``gap`` seconds for bytes (:class:`Stalled` past it), watched by one timer
per exchange (:class:`GapWatch`); a broken answer is a :class:`ProtocolError`; socket failures are
``OSError`` as asyncio raises them.
"""

from __future__ import annotations

import asyncio
import re
import select
import ssl
import zlib
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import h11

PIECE = 64 * 1024  # the most bytes taken from the socket, or out of a decoder, at once
HEAD_LIMIT = 64 * 1024  # bytes of an answer's head h11 holds while it is still incomplete
ACCEPT_ENCODING = "gzip, deflate"

EARLY = 0.001  # seconds a loop may run a timer before its time (its clock's resolution)

# What the plain path reads: a final HTTP/1.1 status line and header lines as h11 parses them (a
# name, a colon, a value without surrounding blanks); any other line goes to h11.
STATUS_LINE = re.compile(rb"HTTP/1\.1 ([0-9]{3})(?: (?:[ \t]|[^\x00\s])*)?")
HEADER_LINES = re.compile(
    rb"(?:[-!#$%&'*+.^_`|~0-9a-zA-Z]+:[ \t]*(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?[ \t]*\r\n)*"
)
"""Header lines, each ended by CRLF (checked as a block with one match, not line by line: the
name is then what comes before the first colon, the value what follows it, less blanks)."""
HEAD_END = re.compile(rb"\n\r?\n")  # where h11 ends a head: a blank line, with or without CR
DIGITS = re.compile(rb"[0-9]+")


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
    """A POST ready to be written: its head as bytes (line, headers, length), its body, and
    what h11 is told of it when it reads the answer."""

    target: bytes
    fields: list[tuple[bytes, bytes]]
    """The headers but the length, as h11 checked them."""
    head: bytes
    body: bytes
    keep_alive: bool
    """Whether the request lets the connection carry another one (no ``Connection: close``)."""

    def tell(self, protocol: h11.Connection) -> None:
        """Bring h11's state to where it is after writing this request (its bytes are already
        on the wire), so it can read the answer."""
        length = (b"content-length", b"%d" % len(self.body))
        head = h11.Request(method=b"POST", target=self.target, headers=[*self.fields, length])
        protocol.send_with_data_passthrough(head)
        protocol.send_with_data_passthrough(h11.Data(data=self.body))
        protocol.send_with_data_passthrough(h11.EndOfMessage())


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
    unread: bytes = b""
    """Bytes of the answer read from the socket on the plain path and not yet used."""
    closed: bool = False
    """The plain path read the server's end of the stream."""
    watch: GapWatch | None = None
    """The read gap's timer of the current exchange, set at its first read."""

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
            self.protocol.receive_data(await self.read(gap))
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

    def heard(self) -> tuple[bool, bool]:
        """(whether bytes of the answer are waiting to be read, whether the server closed its
        side), on either path."""
        received, closed = self.protocol.trailing_data
        return bool(received or self.unread), closed or self.closed

    async def read(self, gap: float) -> bytes:
        """The next bytes from the socket (b"" at the server's end of the stream)."""
        if self.watch is None:
            self.watch = GapWatch(gap)
        data = await self.watch.read(self.reader)
        self.closed = not data
        return data

    def end_exchange(self) -> None:
        """Stop the read gap's timer: the exchange is over (or given up)."""
        if self.watch is not None:
            self.watch.stop()
            self.watch = None

    async def plain_head(self, gap: float) -> bytes | None:
        """The answer's head up to its blank line, when it ends with CRLF CRLF within
        ``HEAD_LIMIT`` bytes; else None, with every byte read kept in :attr:`unread`."""
        while (end := HEAD_END.search(self.unread)) is None:
            if len(self.unread) > HEAD_LIMIT:
                return None
            data = await self.read(gap)
            if not data:
                return None
            self.unread += data
        head, self.unread = self.unread[: end.end()], self.unread[end.end() :]
        if len(head) > HEAD_LIMIT or not head.endswith(b"\r\n\r\n"):
            self.unread = head + self.unread
            return None
        return head

    def to_h11(self, request: Request) -> None:
        """Hand the exchange to h11: told of the request, and given every byte read so far."""
        request.tell(self.protocol)
        if self.unread:
            self.protocol.receive_data(self.unread)
            self.unread = b""
        if self.closed:
            self.protocol.receive_data(b"")


@dataclass
class Answer:
    """An answer's status, its headers (names in lower case) and its body, still to be read."""

    status: int
    headers: dict[str, str]
    connection: Connection = field(repr=False)
    gap: float = field(repr=False)
    length: int | None = None
    """The body's length when the plain path reads it (None: h11 frames it)."""
    keep_alive: bool = False
    """On the plain path: neither side said ``Connection: close``."""

    def decoded(self) -> AsyncIterator[bytes]:
        """The body as it arrives, after its content encodings are undone, in pieces of at most
        ``PIECE`` bytes."""
        decoders = content_decoders(self.headers.get("content-encoding", ""))
        raw = self._raw() if self.length is None else self._sized(self.length)
        return _decode(raw, decoders) if decoders else raw  # no layer for a plain body

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

    async def whole(self, limit: int) -> bytes | None:
        """The whole body in one piece, when the plain path reads it, it has no content
        encoding and its length is at most ``limit`` (nearly every answer); None for any other,
        which :meth:`decoded` reads. One coroutine instead of streamed pieces: this is every
        call's answer, and each layer of streaming cost more than the bytes."""
        length = self.length
        if length is None or length > limit or self.headers.get("content-encoding"):
            return None
        pieces = []
        while length:
            piece = await self._piece(length)
            length -= len(piece)
            pieces.append(piece)
        self._sized_end()
        return b"".join(pieces)

    async def _sized(self, length: int) -> AsyncIterator[bytes]:
        """The body of the plain path, its ``length`` bytes as they arrive."""
        while length:
            piece = await self._piece(length)
            length -= len(piece)
            yield piece
        self._sized_end()

    async def _piece(self, left: int) -> bytes:
        """The next bytes of a body the plain path reads, of which ``left`` are still to come."""
        connection = self.connection
        data = connection.unread or await connection.read(self.gap)
        if not data:
            raise ProtocolError("the server closed the connection before the answer's end")
        piece, connection.unread = data[:left], data[left:]
        return piece

    def _sized_end(self) -> None:
        """A body of the plain path read to its end: the connection is reusable when both
        sides keep it and the server sent nothing past the body."""
        self.connection.reusable = self.keep_alive and not self.connection.unread

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
        self._heads: dict[tuple[str, tuple[tuple[str, str], ...]], _CheckedHead] = {}

    def connection(self, fresh: bool = False) -> Lease:
        """A connection for one request and answer (``async with``): a free idle one (unless
        ``fresh``), else a new one. It goes back to the idle ones only when its answer was read
        whole and it has not ended; whether the server hung up since is asked of the socket
        when it is taken again (once per call, not twice)."""
        return Lease(self, fresh)

    async def take(self, fresh: bool) -> Connection:
        """A connection, once one of the ``size`` is free."""
        await self._free.acquire()
        try:
            connection = (None if fresh else self._take_idle()) or await self._open()
        except BaseException:
            self._free.release()
            raise
        connection.reusable = False
        return connection

    def give_back(self, connection: Connection) -> None:
        """Keep ``connection`` among the idle ones if it may carry another request, else hang
        it up; either way its place is free for the next call."""
        try:
            connection.end_exchange()
            if connection.reusable and not connection.ended():
                self._idle.append(connection)
            else:
                connection.close()
        finally:
            self._free.release()

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
        client decodes and the body's length). The head is checked by h11 the first time these
        headers are sent, and kept."""
        key = (path, tuple(headers.items()))
        checked = self._heads.get(key)
        if checked is None:
            if len(self._heads) >= MAX_HEADS:  # a key refreshed many times: start again
                self._heads.clear()
            checked = self._heads[key] = self._check(path, headers)
        head = checked.prefix + b"content-length: %d\r\n\r\n" % len(body)
        return Request(checked.target, checked.fields, head, body, checked.keep_alive)

    def _check(self, path: str, headers: dict[str, str]) -> _CheckedHead:
        fields = [("host", self.authority), *headers.items(), ("accept-encoding", ACCEPT_ENCODING)]
        try:
            event = h11.Request(method="POST", target=f"{self.base_path}{path}", headers=fields)
        except h11.LocalProtocolError as exc:
            detail = f"a request header holds a line break or a bad byte: {exc}"
            raise ProtocolError(detail) from None
        items = event.headers.raw_items()
        lines = [b"POST %s HTTP/1.1\r\n" % event.target]
        # the host first, as h11 writes it (RFC 7230 asks a client to)
        lines += [b"%s: %s\r\n" % item for item in items if item[0].lower() == b"host"]
        lines += [b"%s: %s\r\n" % item for item in items if item[0].lower() != b"host"]
        keep_alive = b"close" not in comma_tokens(items, b"connection")
        return _CheckedHead(event.target, list(items), b"".join(lines), keep_alive)

    def close(self) -> None:
        """Hang up every idle connection."""
        for connection in self._idle:
            connection.close()
        self._idle.clear()


class Lease:
    """One call's hold on a connection of a pool, as an ``async with`` block. A class of its own
    rather than a generator-based context manager: it is entered for every call, and the
    generator machinery cost more than the pool's own work."""

    __slots__ = ("_connection", "_fresh", "_pool")

    def __init__(self, pool: Http11Pool, fresh: bool) -> None:
        self._pool = pool
        self._fresh = fresh
        self._connection: Connection | None = None

    async def __aenter__(self) -> Connection:
        self._connection = await self._pool.take(self._fresh)
        return self._connection

    async def __aexit__(self, *exc_info: object) -> None:
        if self._connection is not None:
            self._pool.give_back(self._connection)
            self._connection = None


@dataclass(frozen=True)
class _CheckedHead:
    """A request head h11 accepted, as bytes up to its length."""

    target: bytes
    fields: list[tuple[bytes, bytes]]
    prefix: bytes
    keep_alive: bool


MAX_HEADS = 16  # checked heads a pool keeps (one per path and set of headers, a new key's too)


async def exchange(connection: Connection, request: Request, gap: float) -> Answer:
    """Write ``request`` whole and read the head of its answer (after any ``1xx`` ones); on a
    kept connection the server had closed, :class:`StaleConnection`."""
    try:
        return await _exchange(connection, request, gap)
    except (ConnectionResetError, BrokenPipeError, ProtocolError) as exc:
        received, closed = connection.heard()
        hung_up = not received and (closed or isinstance(exc, OSError))
        if connection.kept and hung_up:
            raise StaleConnection(str(exc)) from None
        raise


async def _exchange(connection: Connection, request: Request, gap: float) -> Answer:
    connection.writer.write(request.head + request.body)  # one write: one segment if small
    await connection.writer.drain()
    head = await connection.plain_head(gap)
    answer = plain_answer(head, connection, request, gap) if head is not None else None
    if answer is not None:
        return answer
    if head is not None:
        connection.unread = head + connection.unread
    connection.to_h11(request)
    while True:
        try:
            event = await connection.next_event(gap)
        except h11.RemoteProtocolError as exc:
            raise ProtocolError(broken_head(connection, exc)) from None
        if isinstance(event, h11.Response):
            return Answer(event.status_code, joined(event.headers), connection, gap)
        if not isinstance(event, h11.InformationalResponse):  # a 1xx is skipped
            raise ProtocolError(f"an answer's head broken by {type(event).__name__}")


def plain_answer(
    head: bytes, connection: Connection, request: Request, gap: float
) -> Answer | None:
    """The answer of a plain head (see the module docstring), its body still to be read; None
    for any other head, which h11 reads instead."""
    status_end = head.index(b"\r\n")
    status = STATUS_LINE.fullmatch(head, 0, status_end)
    if status is None:
        return None
    code = int(status[1])
    if code < 200 or code in (204, 304):  # informational, or a body h11 knows is empty
        return None
    if HEADER_LINES.fullmatch(head, status_end + 2, len(head) - 2) is None:
        return None
    fields = []
    for line in head[status_end + 2 : -4].split(b"\r\n") if len(head) > status_end + 4 else ():
        name, _, value = line.partition(b":")
        fields.append((name.lower(), value.strip(b" \t")))
    lengths = [value for name, value in fields if name == b"content-length"]
    framed = any(name == b"transfer-encoding" for name, _ in fields)
    if framed or len(lengths) != 1 or DIGITS.fullmatch(lengths[0]) is None:
        return None
    keep_alive = request.keep_alive and b"close" not in comma_tokens(fields, b"connection")
    return Answer(code, joined(fields), connection, gap, int(lengths[0]), keep_alive)


def comma_tokens(fields: Sequence[tuple[bytes, bytes]], name: bytes) -> list[bytes]:
    """The comma-separated tokens of every ``name`` header, in lower case."""
    return [
        token.strip().lower()
        for key, value in fields
        if key.lower() == name
        for token in value.split(b",")
    ]


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


class GapWatch:
    """Gives up a read that waits ``gap`` seconds for bytes, with one timer for a whole exchange
    instead of one per read: a read notes when it began, and the timer, when due, cancels the
    task only if a read has waited that long (else it sets itself for when the waiting read, or
    the next one, would be due). A timer armed and cancelled for every read would cost more CPU
    than the read itself."""

    def __init__(self, gap: float) -> None:
        self.gap = gap
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._waiting_since: float | None = None
        self._fired = False
        self._timer = self._loop.call_at(self._loop.time() + gap, self._due)

    def _due(self) -> None:
        now = self._loop.time()
        since = self._waiting_since
        if since is not None and now + EARLY >= since + self.gap and self._task is not None:
            self._fired = True
            self._task.cancel()
            return
        self._timer = self._loop.call_at((now if since is None else since) + self.gap, self._due)

    async def read(self, reader: asyncio.StreamReader) -> bytes:
        """The next bytes from ``reader`` (b"" at its end); :class:`Stalled` after ``gap``
        seconds without them."""
        task = self._task
        cancelling = task.cancelling() if task is not None else 0
        self._waiting_since = self._loop.time()
        try:
            return await reader.read(PIECE)
        except asyncio.CancelledError:
            # the cancel was this watch's own (not also the caller's): the read stalled
            if self._fired and task is not None and task.uncancel() <= cancelling:
                raise Stalled from None
            raise
        finally:
            self._waiting_since = None

    def stop(self) -> None:
        """Cancel the timer."""
        self._timer.cancel()


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


async def _decode(raw: AsyncIterator[bytes], decoders: list[Inflater]) -> AsyncIterator[bytes]:
    """``raw`` through ``decoders``, a piece at a time."""
    async for piece in raw:
        for out in undo(decoders, piece):
            yield out
    for index, decoder in enumerate(decoders):  # what each decoder held, through the rest
        for out in undo(decoders[index + 1 :], decoder.finish()):
            yield out


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
