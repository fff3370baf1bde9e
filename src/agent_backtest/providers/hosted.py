"""What the hosted providers share: a JSON POST to one path of an endpoint, with a key.

The OpenAI and Anthropic providers differ in their body, their key header and their answer's
shape; opening, sending, a fresh key and closing are the same for both, and live here once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Self

import orjson

from agent_backtest.providers.config import ProviderSettings
from agent_backtest.trace import LLMRequest, LLMResponse

if TYPE_CHECKING:
    from agent_backtest.providers.factory import ProviderSpec
    from agent_backtest.providers.http import JsonEndpoint


class HostedProvider(ABC):
    """POSTs ``path`` over the provider's own connections; a subclass builds the body, names
    the key's headers and reads the answer."""

    needs_base_url = True
    path: ClassVar[str]
    """Where the body is POSTed, below the endpoint."""
    default_base_url: ClassVar[str | None] = None
    """The endpoint when the settings name none (None: the settings must)."""

    @classmethod
    def open(cls, spec: ProviderSpec) -> Self:
        """The provider of one model reference."""
        return cls(spec.ref.provider, spec.settings, spec.api_key, spec.max_connections)

    def __init__(
        self, name: str, settings: ProviderSettings, api_key: str | None, max_connections: int = 64
    ) -> None:
        base_url = settings.base_url or self.default_base_url
        if not base_url:
            raise ValueError(f"provider {name} needs a base_url")
        self.name = name
        self.settings = settings
        self.endpoint = base_url.rstrip("/")
        self._api_key = api_key
        self._headers: dict[str, str] | None = None
        self._http = json_endpoint(settings, self.endpoint, max_connections)

    @abstractmethod
    def payload(
        self, request: LLMRequest, model: str, seed: int | None
    ) -> tuple[dict[str, Any], list[str]]:
        """The body for ``request`` on ``model``, and what could not be carried over."""

    @abstractmethod
    def auth_headers(self) -> dict[str, str]:
        """The headers that carry the key (and whatever else every request needs)."""

    @abstractmethod
    def answer(self, body: Any) -> LLMResponse:
        """A decoded answer as a canonical response; a ``ProviderError`` for anything else."""

    def set_api_key(self, key: str) -> None:
        """Send this key from now on."""
        self._api_key = key
        self._headers = None

    async def send(self, payload: dict[str, Any], timeout: float) -> LLMResponse:
        """One POST; every failure becomes a classified ``ProviderError``."""
        return await self.send_body(orjson.dumps(payload), timeout)

    async def send_body(self, body: bytes, timeout: float) -> LLMResponse:
        """One POST of a payload already serialised as JSON (the client hashes the bytes it
        sends, so the payload is serialised once per call)."""
        if self._headers is None:  # built once per key, not per call
            self._headers = {"content-type": "application/json", **self.auth_headers()}
        answer = await self._http.post(self.path, body, self._headers, timeout, self.secrets())
        return self.answer(answer)

    def secrets(self) -> tuple[str, ...]:
        """What error messages must never show."""
        return (self._api_key,) if self._api_key else ()

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()


def json_endpoint(settings: ProviderSettings, base_url: str, max_connections: int) -> JsonEndpoint:
    """The connections of a hosted provider, its answers capped at the settings'
    ``max_answer_bytes``. The HTTP machinery is imported here, when a provider that needs it is
    made, not when the providers are (httpx, whose import costs ~50 ms, only for an https
    endpoint or one behind a proxy)."""
    from agent_backtest.providers.http import JsonEndpoint

    return JsonEndpoint(base_url, settings.headers, max_connections, settings.max_answer_bytes)
