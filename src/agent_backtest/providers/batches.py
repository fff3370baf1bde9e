"""Provider batch APIs: what every one of them does, and the HTTP they share.

A batch API takes many requests at once, answers them within a window (24 hours for OpenAI and
Anthropic) at half the price, and gives the answers back keyed by the ``custom_id`` each request
was sent with. :class:`BatchAPI` is that contract; ``openai_batch`` and ``anthropic_batch``
implement it with the very payloads and answer parsers of the live providers, so a batch answer
and a live answer of the same request are the same record.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

import orjson

from agent_backtest.providers.client import RETRIED, CallPolicy
from agent_backtest.providers.errors import ProviderError, kind_of_status, parse_retry_after
from agent_backtest.redaction import redact
from agent_backtest.trace import LLMResponse

if TYPE_CHECKING:
    import httpx

    from agent_backtest.providers.base import Provider
    from agent_backtest.providers.hosted import HostedProvider

BATCH_TYPES = ("openai", "anthropic")
"""The provider types (``[providers.NAME] type``) that have a batch API."""


@dataclass(frozen=True)
class BatchLimits:
    """How much one batch may hold."""

    requests: int
    bytes: int


@dataclass(frozen=True)
class Submitted:
    """A batch the provider accepted."""

    id: str
    input_file_id: str | None = None


@dataclass(frozen=True)
class BatchState:
    """A batch's status as the provider reports it."""

    status: str
    """The provider's own word: in_progress, completed, expired, ended, …"""
    ended: bool
    """No request of the batch will be answered any more: its results can be read."""
    result_files: tuple[str, ...] = ()
    """Where the answers are (file ids, or a results URL)."""
    problem: str | None = None
    """Why the batch as a whole ran nothing (a failed validation), when it says."""


@dataclass(frozen=True)
class BatchAnswer:
    """One request's result: an answer, a classified error, or neither (it was cancelled before
    it ran: nothing was paid, and the request is still to do)."""

    custom_id: str
    response: LLMResponse | None = None
    error: ProviderError | None = None


class BatchAPI(ABC):
    """One provider's batch endpoints, beside its live endpoint and over its headers and key: a
    subclass says how a request line looks, how a batch is made and polled, where its result
    files are read and what one result line says."""

    limits: ClassVar[BatchLimits]

    def __init__(self, provider: HostedProvider, policy: CallPolicy) -> None:
        headers = {**provider.settings.headers, **provider.auth_headers()}
        self._http = BatchHTTP(provider.endpoint, headers, provider.secrets(), policy)

    @abstractmethod
    def line(self, custom_id: str, payload: dict[str, Any]) -> bytes:
        """One request of a batch as the provider takes it (a JSON line, without newline)."""

    @abstractmethod
    async def submit(self, lines: list[bytes]) -> Submitted:
        """Create a batch of these requests."""

    @abstractmethod
    async def state(self, batch: Submitted) -> BatchState:
        """The batch's status now."""

    @abstractmethod
    def result_path(self, result_file: str) -> str:
        """Where one of a state's ``result_files`` is read (a path or a URL on the endpoint)."""

    def result(self, line: bytes) -> BatchAnswer | None:
        """One result line as an answer or a classified error; None for a line that names no
        request (it cannot be given to one, and that request stays to do)."""
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(record, dict) or not isinstance(record.get("custom_id"), str):
            return None
        return self.answer(record["custom_id"], record)

    @abstractmethod
    def answer(self, custom_id: str, record: dict[str, Any]) -> BatchAnswer:
        """The answer of a result line (a JSON object) to request ``custom_id``, or its
        classified error."""

    async def answers(self, state: BatchState) -> list[BatchAnswer]:
        """Every line of the ended batch's result files."""
        answers = []
        for result_file in state.result_files:
            response = await self._http.request("GET", self.result_path(result_file))
            for line in response.content.splitlines():
                answer = self.result(line)
                if answer is not None:
                    answers.append(answer)
        return answers

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()


def batch_api(provider: Provider, policy: CallPolicy) -> BatchAPI | None:
    """The batch API of ``provider``'s endpoint, or None when its wire protocol has none."""
    from agent_backtest.providers.anthropic import AnthropicProvider
    from agent_backtest.providers.openai import OpenAIProvider

    if isinstance(provider, OpenAIProvider):
        from agent_backtest.providers.openai_batch import OpenAIBatches

        return OpenAIBatches(provider, policy)
    if isinstance(provider, AnthropicProvider):
        from agent_backtest.providers.anthropic_batch import AnthropicBatches

        return AnthropicBatches(provider, policy)
    return None


def chunks(lines: Iterable[tuple[str, bytes]], limits: BatchLimits) -> Iterator[list[bytes]]:
    """The encoded requests cut into batches within ``limits`` (a newline per request counted),
    in order."""
    chunk: list[bytes] = []
    size = 0
    for _, line in lines:
        if chunk and (len(chunk) >= limits.requests or size + len(line) + 1 > limits.bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append(line)
        size += len(line) + 1
    if chunk:
        yield chunk


class BatchHTTP:
    """Requests to a provider's batch endpoints: the provider's headers and key, retries of
    transient failures with the role's policy, and every failure a redacted ``ProviderError``."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        secrets: tuple[str, ...],
        policy: CallPolicy,
    ) -> None:
        import httpx

        from agent_backtest.providers.http import tls_context

        self.base_url = base_url.rstrip("/")
        self._secrets = secrets
        self._policy = policy
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            verify=tls_context(self.base_url),
            timeout=policy.timeout,
        )

    async def json(self, method: str, path: str, **send: Any) -> Any:
        """The decoded JSON answer of one request."""
        import orjson

        response = await self.request(method, path, **send)
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError as exc:
            raise ProviderError(
                "malformed_response", f"{path}: answer is not JSON: {exc}"
            ) from None

    async def request(self, method: str, path: str, **send: Any) -> httpx.Response:
        """One request (``path`` relative to the endpoint, or a URL on the endpoint's host),
        retried after a 429, a 5xx, a timeout or a broken connection."""
        self._check_host(path)
        attempt = 0
        while True:
            try:
                return await self._once(method, path, **send)
            except ProviderError as error:
                attempt += 1
                if error.kind not in RETRIED or attempt > self._policy.max_retries:
                    raise
                wait = error.retry_after
                if wait is None:
                    wait = min(self._policy.backoff_max, self._policy.backoff_initial * 2**attempt)
                await asyncio.sleep(wait)

    async def _once(self, method: str, path: str, **send: Any) -> httpx.Response:
        import httpx

        try:
            response = await self._client.request(method, path, **send)
        except httpx.TimeoutException:
            raise ProviderError(
                "timeout", f"{path}: no answer within {self._policy.timeout:g} s"
            ) from None
        except httpx.HTTPError as exc:
            detail = redact(f"{path}: {type(exc).__name__}: {exc}", self._secrets)
            raise ProviderError("connection", detail) from None
        if response.status_code >= 300:
            detail = redact(
                f"{method} {urlsplit(path).path}: HTTP {response.status_code}: "
                f"{response.text[:300]}",
                self._secrets,
            )
            raise ProviderError(
                kind_of_status(response.status_code),
                detail,
                status=response.status_code,
                retry_after=parse_retry_after(response.headers.get("retry-after")),
            )
        return response

    def _check_host(self, path: str) -> None:
        """A URL the provider hands back (a results URL) must be on its own endpoint: the key
        goes with the request."""
        if "://" not in path:
            return
        given, own = urlsplit(path), urlsplit(self.base_url)
        if (given.scheme, given.netloc) != (own.scheme, own.netloc):
            raise ProviderError(
                "malformed_response",
                f"the provider named {given.scheme}://{given.netloc} for the results, not its "
                f"own endpoint {own.scheme}://{own.netloc}; the key is not sent there",
            )

    async def aclose(self) -> None:
        """Close the connections."""
        await self._client.aclose()


def error_detail(body: Any) -> str:
    """The message of an API error body (``{"error": {"message": …}}``), or the body itself."""
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            inner = error.get("error")
            if isinstance(inner, dict):  # Anthropic wraps its error once more in batch results
                error = inner
            message = error.get("message")
            kind = error.get("type") or error.get("code")
            if message:
                return f"{kind}: {message}" if kind else str(message)
    return str(body)[:300]
