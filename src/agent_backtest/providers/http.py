"""JSON over HTTP to one endpoint, for the hosted providers: pooled keep-alive connections, and
every failure a classified ``ProviderError``.

Calls go straight over :mod:`~agent_backtest.providers.wire`'s HTTP/1.1 connections, at most
``max_connections`` of them: a replay's CPU per call is then a few tenths of a millisecond where
httpx spent about two (``benchmarks/replay_throughput.py``). httpx is kept for an endpoint
reached through a proxy named in the environment (``HTTPS_PROXY``, ``HTTP_PROXY``,
``ALL_PROXY``, minus ``NO_PROXY``), which it speaks and the direct path does not. Its
connections are split into lanes of at most ``LANE_CONNECTIONS``, each its own httpx client:
httpcore's pool walks all its connections (and, for each, all of them again) whenever a request
starts or ends, so one pool of 64 connections spends more CPU on that bookkeeping than the rest
of a replay spends on everything. A call takes the lane with the most connections free.

A call's ``timeout`` bounds the whole attempt (waiting for a connection, connecting, sending,
waiting and reading the answer), so a server that trickles its answer a byte at a time cannot
hold a call past it; within that bound, an answer that stops arriving for ``READ_GAP`` seconds
is a stalled one and given up at once.

An answer is read as a stream and counted as it is decoded (after gzip or deflate), so one
larger than ``max_answer_bytes`` is given up as ``answer_too_large`` the moment it passes the cap,
never held whole: a gzip bomb or a runaway answer costs at most the cap and one piece of decoded
bytes. The JSON is parsed inside the timed section, so a huge answer cannot hold a call past its
timeout.
"""

from __future__ import annotations

import asyncio
import math
import ssl
import urllib.request
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from agent_backtest.providers import wire
from agent_backtest.providers.errors import (
    ProviderError,
    kind_of_status,
    parse_retry_after,
    redact,
)

if TYPE_CHECKING:
    import httpx

LANE_CONNECTIONS = 8
READ_GAP = 30.0  # seconds without a byte of the answer before it counts as stalled
MAX_ANSWER_BYTES = 32 * 1024 * 1024
"""The default cap on one answer's decoded size."""
ERROR_BODY_BYTES = 4096  # what is read of an error answer: its message is cut to 300 characters


@dataclass(frozen=True)
class _Attempt:
    """One POST's bounds: seconds for the whole attempt, seconds without a byte of the answer,
    and what its error messages must never show."""

    timeout: float
    gap: float
    secrets: tuple[str, ...]


class JsonEndpoint:
    """POSTs JSON to ``base_url`` over at most ``max_connections`` connections."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        max_connections: int,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
    ) -> None:
        self.max_answer_bytes = max_answer_bytes
        self._headers = {**default_headers(), **{k.lower(): v for k, v in headers.items()}}
        self._direct: wire.Http11Pool | None = None
        self._lanes: list[httpx.AsyncClient] = []
        verify = tls_context(base_url)
        if proxied(base_url):
            self._open_lanes(base_url, headers, max_connections, verify)
        else:
            self._direct = wire.Http11Pool(base_url, max_connections, verify)

    def _open_lanes(
        self, base_url: str, headers: dict[str, str], max_connections: int, verify: ssl.SSLContext
    ) -> None:
        import httpx

        self._free = lane_sizes(max_connections)  # calls each lane takes before it queues them
        self._lanes = [
            httpx.AsyncClient(
                base_url=base_url,
                headers=headers,
                limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
                verify=verify,
                timeout=None,  # the call path sets a per-attempt timeout
            )
            for size in self._free
        ]

    async def post(
        self,
        path: str,
        body: bytes,
        headers: dict[str, str],
        timeout: float,
        secrets: tuple[str, ...],
    ) -> Any:
        """POST the JSON ``body`` and return the decoded answer, or raise a classified error."""
        gap = min(READ_GAP, timeout)
        try:
            async with asyncio.timeout(timeout):
                attempt = _Attempt(timeout, gap, secrets)
                if self._direct is not None:
                    return await self._post_direct(self._direct, path, body, headers, attempt)
                return await self._post_proxied(path, body, headers, attempt)
        except TimeoutError:
            raise ProviderError("timeout", f"no whole answer within {timeout:g} s") from None
        except wire.Stalled:
            raise ProviderError("timeout", f"the answer stalled: no byte for {gap:g} s") from None
        except (OSError, wire.ProtocolError) as exc:  # connect errors, resets, broken answers
            detail = redact(f"{type(exc).__name__}: {exc}", secrets)
            raise ProviderError("connection", detail) from None

    async def _post_direct(
        self, pool: wire.Http11Pool, path: str, body: bytes, headers: dict[str, str], at: _Attempt
    ) -> Any:
        request = pool.request(path, {**self._headers, **headers}, body)
        try:
            return await self._exchange_on(pool, request, at)
        except wire.StaleConnection:  # no byte of an answer came: the server never took it
            return await self._exchange_on(pool, request, at, fresh=True)

    async def _exchange_on(
        self, pool: wire.Http11Pool, request: wire.Request, at: _Attempt, fresh: bool = False
    ) -> Any:
        async with pool.connection(fresh) as connection:
            answer = await wire.exchange(connection, request, at.gap)
            if answer.status < 300:
                whole = await answer.whole(self.max_answer_bytes)
                if whole is not None:
                    return _json(whole, answer.status)
            return await self._answer(answer.status, answer.headers, answer.decoded(), at.secrets)

    async def _post_proxied(
        self, path: str, body: bytes, headers: dict[str, str], at: _Attempt
    ) -> Any:
        import httpx

        lane = max(range(len(self._lanes)), key=self._free.__getitem__)
        self._free[lane] -= 1
        try:
            request = self._lanes[lane].build_request(
                "POST",
                path,
                content=body,
                headers=headers,
                timeout=httpx.Timeout(at.timeout, read=at.gap),
            )
            response = await self._lanes[lane].send(request, stream=True)
            try:
                return await self._answer(
                    response.status_code, response.headers, response.aiter_bytes(), at.secrets
                )
            finally:
                await response.aclose()
        except httpx.HTTPError as exc:
            raise _httpx_error(exc, at) from None
        finally:
            self._free[lane] += 1

    async def _answer(
        self,
        status: int,
        headers: Mapping[str, str],
        body: AsyncIterator[bytes],
        secrets: tuple[str, ...],
    ) -> Any:
        """The answer's JSON, read within the cap; an HTTP error status raised classified."""
        if status >= 300:
            text = (await _read(body, status, ERROR_BODY_BYTES, cut=True)).decode(
                "utf-8", "replace"
            )
            raise ProviderError(
                kind_of_status(status),
                redact(f"HTTP {status}: {text[:300]}", secrets),
                status=status,
                retry_after=parse_retry_after(headers.get("retry-after")),
            )
        return _json(await _read(body, status, self.max_answer_bytes), status)

    async def aclose(self) -> None:
        """Close every connection."""
        if self._direct is not None:
            self._direct.close()
        for client in self._lanes:
            await client.aclose()


def _json(data: bytes, status: int) -> Any:
    """An answer's body decoded as JSON; a ``malformed_response`` when it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ProviderError(
            "malformed_response", f"answer is not JSON: {exc}", status=status
        ) from None


def _httpx_error(exc: httpx.HTTPError, at: _Attempt) -> ProviderError:
    """An httpx error of the proxied path, classified as the direct path's are."""
    import httpx

    if isinstance(exc, httpx.ReadTimeout):
        return ProviderError("timeout", f"the answer stalled: no byte for {at.gap:g} s")
    if isinstance(exc, httpx.TimeoutException):
        return ProviderError("timeout", f"no answer within {at.timeout:g} s")
    detail = redact(f"{type(exc).__name__}: {exc}", at.secrets)
    return ProviderError("connection", detail)  # connect, read and protocol errors, resets


async def _read(body: AsyncIterator[bytes], status: int, limit: int, cut: bool = False) -> bytes:
    """The answer's decoded bytes, at most ``limit`` of them: past it, the first ``limit``
    when ``cut``, else an ``answer_too_large`` error (the rest is never read)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in body:
        size += len(chunk)
        if size > limit:
            if cut:
                chunks.append(chunk[: len(chunk) - (size - limit)])
                break
            raise ProviderError(
                "answer_too_large",
                f"the answer passed {limit:,} bytes (decoded): the endpoint's max_answer_bytes "
                "is the cap",
                status=status,
            )
        chunks.append(chunk)
    return b"".join(chunks)


def default_headers() -> dict[str, str]:
    """What every direct request says of itself unless the settings' headers say otherwise:
    that it takes JSON, and which client sends it (some gateways refuse a request without)."""
    from agent_backtest import __version__

    return {"accept": "application/json", "user-agent": f"agent-backtest/{__version__}"}


def proxied(base_url: str) -> bool:
    """Whether the environment names a proxy for ``base_url`` (as httpx would use it)."""
    proxies = urllib.request.getproxies_environment()
    scheme = urlsplit(base_url).scheme
    if not (proxies.get(scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass_environment(urlsplit(base_url).netloc, proxies)


def tls_context(base_url: str) -> ssl.SSLContext:
    """One TLS context for every connection of the endpoint, direct or in a proxied lane:
    httpx's verifying default for https; for plain http, which never uses TLS, an empty context
    that trusts nothing (loading the CA bundle would cost tens of milliseconds of every start)."""
    if base_url.startswith("https://"):
        import httpx

        return httpx.create_ssl_context()
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def lane_sizes(max_connections: int) -> list[int]:
    """``max_connections`` split into as few lanes as hold at most ``LANE_CONNECTIONS`` each,
    as even as can be: 64 is 8 × 8, 20 is 7 + 7 + 6."""
    total = max(1, max_connections)
    lanes = math.ceil(total / LANE_CONNECTIONS)
    return [total // lanes + (lane < total % lanes) for lane in range(lanes)]
