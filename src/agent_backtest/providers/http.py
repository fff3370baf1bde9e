"""JSON over HTTP to one endpoint, for the hosted providers: pooled keep-alive connections, and
every failure a classified ``ProviderError``.

The connections are split into lanes of at most ``LANE_CONNECTIONS``, each its own httpx client:
httpcore's pool walks all its connections (and, for each, all of them again) whenever a request
starts or ends, so one pool of 64 connections spends more CPU on that bookkeeping than the rest
of a replay spends on everything (``benchmarks/replay_throughput.py``). A call takes the lane with
the most connections free.

A call's ``timeout`` bounds the whole attempt (waiting for a connection, connecting, sending,
waiting and reading the answer), so a server that trickles its answer a byte at a time cannot
hold a call past it; within that bound, an answer that stops arriving for ``READ_GAP`` seconds
is a stalled one and given up at once.

An answer is read as a stream and counted as it is decoded (after gzip or brotli), so one
larger than ``max_answer_bytes`` is given up as ``answer_too_large`` the moment it passes the cap,
never held whole: a gzip bomb or a runaway answer costs at most the cap and one network read of
decoded bytes. The JSON is parsed inside the timed section, so a huge answer cannot hold a call
past its timeout.
"""

from __future__ import annotations

import asyncio
import math
import ssl
from typing import Any

import httpx
import orjson

from agent_backtest.providers.errors import (
    ProviderError,
    kind_of_status,
    parse_retry_after,
    redact,
)

LANE_CONNECTIONS = 8
READ_GAP = 30.0  # seconds without a byte of the answer before it counts as stalled
MAX_ANSWER_BYTES = 32 * 1024 * 1024
"""The default cap on one answer's decoded size."""
ERROR_BODY_BYTES = 4096  # what is read of an error answer: its message is cut to 300 characters


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
        verify = tls_context(base_url)
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
        payload: dict[str, Any],
        headers: dict[str, str],
        timeout: float,
        secrets: tuple[str, ...],
    ) -> Any:
        """POST ``payload`` and return the decoded answer, or raise a classified error."""
        lane = max(range(len(self._lanes)), key=self._free.__getitem__)
        self._free[lane] -= 1
        gap = min(READ_GAP, timeout)
        try:
            async with asyncio.timeout(timeout):
                request = self._lanes[lane].build_request(
                    "POST",
                    path,
                    content=orjson.dumps(payload),
                    headers=headers,
                    timeout=httpx.Timeout(timeout, read=gap),
                )
                response = await self._lanes[lane].send(request, stream=True)
                try:
                    return await self._answer(response, secrets)
                finally:
                    await response.aclose()
        except TimeoutError:
            raise ProviderError("timeout", f"no whole answer within {timeout:g} s") from None
        except httpx.ReadTimeout:
            raise ProviderError("timeout", f"the answer stalled: no byte for {gap:g} s") from None
        except httpx.TimeoutException:
            raise ProviderError("timeout", f"no answer within {timeout:g} s") from None
        except httpx.HTTPError as exc:  # connect, read and protocol errors, resets
            detail = redact(f"{type(exc).__name__}: {exc}", secrets)
            raise ProviderError("connection", detail) from None
        finally:
            self._free[lane] += 1

    async def _answer(self, response: httpx.Response, secrets: tuple[str, ...]) -> Any:
        """The answer's JSON, read within the cap; an HTTP error status raised classified."""
        if response.status_code >= 300:
            text = (await _read(response, ERROR_BODY_BYTES, cut=True)).decode("utf-8", "replace")
            detail = redact(f"HTTP {response.status_code}: {text[:300]}", secrets)
            raise ProviderError(
                kind_of_status(response.status_code),
                detail,
                status=response.status_code,
                retry_after=parse_retry_after(response.headers.get("retry-after")),
            )
        data = await _read(response, self.max_answer_bytes)
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise ProviderError(
                "malformed_response", f"answer is not JSON: {exc}", status=response.status_code
            ) from None

    async def aclose(self) -> None:
        """Close every connection."""
        for client in self._lanes:
            await client.aclose()


async def _read(response: httpx.Response, limit: int, cut: bool = False) -> bytes:
    """The answer's decoded bytes, at most ``limit`` of them: past it, the first ``limit``
    when ``cut``, else an ``answer_too_large`` error (the rest is never read)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            if cut:
                chunks.append(chunk[: len(chunk) - (size - limit)])
                break
            raise ProviderError(
                "answer_too_large",
                f"the answer passed {limit:,} bytes (decoded): the endpoint's max_answer_bytes "
                "is the cap",
                status=response.status_code,
            )
        chunks.append(chunk)
    return b"".join(chunks)


def tls_context(base_url: str) -> ssl.SSLContext:
    """One TLS context for every lane: httpx's verifying default for https; for plain http,
    which never uses TLS, an empty context that trusts nothing (loading the CA bundle would cost
    tens of milliseconds of every start)."""
    if base_url.startswith("https://"):
        return httpx.create_ssl_context()
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def lane_sizes(max_connections: int) -> list[int]:
    """``max_connections`` split into as few lanes as hold at most ``LANE_CONNECTIONS`` each,
    as even as can be: 64 is 8 × 8, 20 is 7 + 7 + 6."""
    total = max(1, max_connections)
    lanes = math.ceil(total / LANE_CONNECTIONS)
    return [total // lanes + (lane < total % lanes) for lane in range(lanes)]
