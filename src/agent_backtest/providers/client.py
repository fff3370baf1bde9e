"""The one path every model call takes: cache → rate limit → call with a per-attempt timeout →
retry decision → credential refresh → usage accounting → cache store.

Candidate, judge and simulated-user calls all go through :class:`ModelClient`, so they share the
same retries, cache and counts. Nothing else calls a provider.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from agent_backtest.providers.base import Provider
from agent_backtest.providers.cache import ResponseCache, cache_key
from agent_backtest.providers.counters import CallCounters
from agent_backtest.providers.errors import ErrorKind, ProviderError
from agent_backtest.trace import LLMRequest, LLMResponse, canonical_json
from agent_backtest.trace.serialize import sha256_of_bytes

if TYPE_CHECKING:
    from aiolimiter import AsyncLimiter

RETRIED: frozenset[ErrorKind] = frozenset(
    {"http_429", "http_5xx", "connection", "timeout", "malformed_response"}
)
MAX_TIMEOUT_ATTEMPTS = 2  # a timeout is retried once: a runaway answer is not paid for forever
MAX_RETRY_AFTER = 300.0


@dataclass(frozen=True)
class CallPolicy:
    """Timeouts and retries of one role's calls."""

    timeout: float = 60.0
    max_retries: int = 4
    backoff_initial: float = 1.0
    backoff_max: float = 60.0


@dataclass
class CallOutcome:
    """What one logical call gave: an answer or a classified error, and how it got there."""

    response: LLMResponse | None
    error: ProviderError | None
    attempts: int
    latency_ms: float | None
    cache_hit: bool
    request_sha: str
    adjustments: list[str]


class RateLimits:
    """Optional requests-per-minute and tokens-per-minute ceilings shared by all calls."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None) -> None:
        self._tpm_capacity = tpm
        self._requests: AsyncLimiter | None = None
        self._tokens: AsyncLimiter | None = None
        if rpm or tpm:
            # Imported only here: aiolimiter reads its package metadata when imported (~20 ms of
            # every start-up otherwise), and most runs set no limit.
            from aiolimiter import AsyncLimiter

            self._requests = AsyncLimiter(rpm, 60) if rpm else None
            self._tokens = AsyncLimiter(tpm, 60) if tpm else None

    async def acquire(self, payload: dict[str, Any]) -> None:
        """Wait until a call of this size fits under both ceilings (at once without any: the
        estimate, a walk of the whole payload, is made only for a tokens ceiling)."""
        estimate = prompt_tokens_estimate(payload) if self._tokens is not None else 0
        await self.acquire_tokens(estimate)

    async def acquire_tokens(self, estimate: int) -> None:
        """Wait until one request of about ``estimate`` prompt tokens fits under both ceilings
        (what a limiter shared by many processes is asked, without the payload)."""
        if self._requests is not None:
            await self._requests.acquire()
        if self._tokens is not None and self._tpm_capacity:
            await self._tokens.acquire(min(estimate, self._tpm_capacity))


class Limiter(Protocol):
    """What a client waits on before each attempt: :class:`RateLimits` in this process, or a
    limiter shared by the workers of a cluster."""

    async def acquire(self, payload: dict[str, Any]) -> None:
        """Wait until a call of this payload fits under the limits."""


def prompt_tokens_estimate(payload: dict[str, Any]) -> int:
    """About how many prompt tokens a payload holds: four characters per token, the usual
    estimate before the answer says."""
    return max(1, len(str(payload.get("messages", ""))) // 4)


class CredentialCommand:
    """Runs a command that prints a fresh API key, once per expiry however many calls saw it."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.generation = 0
        self._lock = asyncio.Lock()

    async def refresh(self, seen_generation: int) -> str | None:
        """A new key, or None when another call already refreshed since ``seen_generation``."""
        async with self._lock:
            if self.generation != seen_generation:
                return None
            process = await asyncio.create_subprocess_shell(
                self.command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
            )
            out, _ = await process.communicate()
            key = out.decode().strip()
            if process.returncode != 0 or not key:
                raise ProviderError(
                    "http_401",
                    "HTTP 401, and --credential-command failed "
                    f"(exit {process.returncode}, {len(key)} characters printed)",
                    status=401,
                )
            self.generation += 1
            return key


class ModelClient:
    """A provider behind the cache, the limits and the retry policy."""

    def __init__(
        self,
        provider: Provider,
        policy: CallPolicy | None = None,
        cache: ResponseCache | None = None,
        limits: Limiter | None = None,
        credentials: CredentialCommand | None = None,
        counters: CallCounters | None = None,
    ) -> None:
        self.provider = provider
        self.policy = policy or CallPolicy()
        self.cache = cache
        self.limits: Limiter = limits or RateLimits()
        self.credentials = credentials
        self.counters = counters or CallCounters()

    def prepare(
        self, request: LLMRequest, model: str, seed: int | None
    ) -> tuple[dict[str, Any], list[str], str]:
        """(payload as sent, adjustments, request sha) without sending anything."""
        payload, adjustments, _, request_sha = self._serialised(request, model, seed)
        return payload, adjustments, request_sha

    def _serialised(
        self, request: LLMRequest, model: str, seed: int | None
    ) -> tuple[dict[str, Any], list[str], bytes, str]:
        """(payload, adjustments, its canonical JSON, request sha): the bytes hashed for the
        request sha (and the cache key) are the bytes a hosted provider sends."""
        payload, adjustments = self.provider.payload(request, model, seed)
        body = canonical_json(payload)
        return payload, adjustments, body, sha256_of_bytes(body)

    async def generate(self, request: LLMRequest, model: str, seed: int | None) -> CallOutcome:
        """Answer ``request`` on ``model``: from the cache, else by calling with retries."""
        payload, adjustments, body, request_sha = self._serialised(request, model, seed)
        key = ""  # the cache's key, made only when there is a cache
        if self.cache is not None:
            key = cache_key(self.provider.name, self.provider.endpoint, request_sha)
            cached = self._from_cache(self.cache, key, request_sha, adjustments)
            if cached is not None:
                return cached
        call = _Call(self.counters, body)
        try:
            response = await self._send_with_retries(payload, call)
        except ProviderError as error:
            self.counters.count_error(error.kind)
            return CallOutcome(None, error, call.sent, None, False, request_sha, adjustments)
        self.counters.count_usage(response.usage)
        if self.cache is not None and not self.cache.put(key, response):
            self.counters.count_cache_write_error()
        return CallOutcome(
            response, None, call.sent, call.latency_ms, False, request_sha, adjustments
        )

    def cached(self, request: LLMRequest, model: str, seed: int | None) -> CallOutcome | None:
        """The cache's answer to ``request`` on ``model``, as :meth:`generate` would give it,
        without sending anything; None when the cache holds none (or there is no cache)."""
        if self.cache is None:
            return None
        _, adjustments, request_sha = self.prepare(request, model, seed)
        key = cache_key(self.provider.name, self.provider.endpoint, request_sha)
        return self._from_cache(self.cache, key, request_sha, adjustments)

    def _from_cache(
        self, cache: ResponseCache, key: str, request_sha: str, adjustments: list[str]
    ) -> CallOutcome | None:
        """The outcome of a call answered from ``cache`` under ``key``, counted as a hit."""
        cached = cache.get(key)
        if cached is None:
            return None
        self.counters.count_cache_hit()
        return CallOutcome(cached, None, 0, None, True, request_sha, adjustments)

    async def _send_with_retries(self, payload: dict[str, Any], call: _Call) -> LLMResponse:
        """Send until an answer, an error not worth retrying, or the policy's last try:
        ``max_retries`` more tries at most, a timeout only ``MAX_TIMEOUT_ATTEMPTS`` in all (a
        runaway answer is not paid for forever). A plain loop, as the hot path of every call."""
        attempt, timeouts = 1, 0
        while True:
            if attempt > 1:
                self.counters.count_retry()
            await self.limits.acquire(payload)
            try:
                return await self._send(payload, call)
            except ProviderError as error:
                if error.kind not in RETRIED:
                    raise
                timeouts += error.kind == "timeout"
                if timeouts >= MAX_TIMEOUT_ATTEMPTS or attempt > self.policy.max_retries:
                    raise
                await asyncio.sleep(self._wait_before_retry(error, attempt))
            attempt += 1

    def _wait_before_retry(self, error: ProviderError, attempt: int) -> float:
        """Seconds before the try after ``attempt``: what the server asked for (at most
        ``MAX_RETRY_AFTER``), else ``backoff_initial`` doubled per try up to ``backoff_max``,
        plus up to ``backoff_initial`` of jitter so that failed calls do not retry in step."""
        if error.retry_after is not None:
            return min(error.retry_after, MAX_RETRY_AFTER)
        initial = self.policy.backoff_initial
        backoff = min(initial * 2.0 ** min(attempt - 1, 64), self.policy.backoff_max)
        return max(0.0, backoff) + random.uniform(0, initial)

    async def _send(self, payload: dict[str, Any], call: _Call) -> LLMResponse:
        """One try: the request, and after an HTTP 401 with a credential command, a fresh key
        and the request once more."""
        generation = self.credentials.generation if self.credentials else 0
        try:
            return await call.send(self.provider, payload, self.policy.timeout)
        except ProviderError as error:
            if error.kind != "http_401" or self.credentials is None:
                raise
        key = await self.credentials.refresh(generation)
        if key is not None:
            self.provider.set_api_key(key)
            self.counters.count_credential_refresh()
        return await call.send(self.provider, payload, self.policy.timeout)


class _Call:
    """The requests of one logical call: how many were sent, and the answering one's time."""

    def __init__(self, counters: CallCounters, body: bytes) -> None:
        self.counters = counters
        self.body = body
        """The payload's canonical JSON, sent as it is by a provider that takes bytes."""
        self.sent = 0
        self.latency_ms: float | None = None

    async def send(
        self, provider: Provider, payload: dict[str, Any], timeout: float
    ) -> LLMResponse:
        """Send once, counted whatever happens; an in-process model loads first, untimed."""
        load = getattr(provider, "load", None)  # only in-process providers have one
        if load is not None:
            self.counters.count_model_load(await load())
        self.sent += 1
        self.counters.count_call()
        # A hosted provider posts the bytes already hashed; any other takes the payload.
        send_body = getattr(provider, "send_body", None)
        started = time.perf_counter()
        if send_body is not None:
            response = await send_body(self.body, timeout)
        else:
            response = await provider.send(payload, timeout)
        self.latency_ms = (time.perf_counter() - started) * 1000
        return response
