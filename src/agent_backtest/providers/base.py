"""The provider contract: build the payload as it will be sent, then send it.

Keeping the two apart lets the one call path (``providers.client``) hash the exact payload for
the cache and the record before anything leaves the machine.
"""

from __future__ import annotations

from typing import Any, Protocol

from agent_backtest.trace import LLMRequest, LLMResponse


class Provider(Protocol):
    """A model endpoint. ``send`` raises ``ProviderError`` for every failure it can classify."""

    name: str
    endpoint: str
    """What identifies the endpoint in cache keys: a base URL, or the local model file."""

    def payload(
        self, request: LLMRequest, model: str, seed: int | None
    ) -> tuple[dict[str, Any], list[str]]:
        """The wire payload for ``request`` on ``model``, and what had to be removed or changed."""
        ...

    async def send(self, payload: dict[str, Any], timeout: float) -> LLMResponse:
        """Send the payload once and parse the answer."""
        ...

    def set_api_key(self, key: str) -> None:
        """Use a fresh credential from now on (after HTTP 401 and a credential command)."""
        ...

    async def aclose(self) -> None:
        """Release connections and models."""
        ...
