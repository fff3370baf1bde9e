"""The OpenAI chat-completions provider, for OpenAI and every compatible server."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
from pydantic import ValidationError

from agent_backtest.errors import RecordError
from agent_backtest.providers.config import ProviderSettings
from agent_backtest.providers.errors import (
    ProviderError,
    kind_of_status,
    parse_retry_after,
    redact,
)
from agent_backtest.trace import LLMRequest, LLMResponse
from agent_backtest.trace.openai_wire import chat_payload, response_from_openai


class OpenAIProvider:
    """POSTs ``/chat/completions`` with httpx; one connection pool per provider."""

    def __init__(
        self, name: str, settings: ProviderSettings, api_key: str | None, max_connections: int = 64
    ) -> None:
        if not settings.base_url:
            raise ValueError(f"provider {name} needs a base_url")
        self.name = name
        self.settings = settings
        self.endpoint = settings.base_url.rstrip("/")
        self._api_key = api_key
        self._client = httpx.AsyncClient(
            base_url=self.endpoint,
            headers=settings.headers,
            limits=httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
            timeout=None,  # the call path sets a per-attempt timeout
        )

    def payload(
        self, request: LLMRequest, model: str, seed: int | None
    ) -> tuple[dict[str, Any], list[str]]:
        """The chat-completions body, with configured removals."""
        return chat_payload(
            request, model, seed, self.settings.drop_schema_keys, self.settings.drop_params
        )

    def set_api_key(self, key: str) -> None:
        """Send this key from now on."""
        self._api_key = key

    async def send(self, payload: dict[str, Any], timeout: float) -> LLMResponse:
        """One POST; every failure becomes a classified ``ProviderError``."""
        headers = {"content-type": "application/json"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        body = await post_json(
            self._client, "/chat/completions", payload, headers, timeout, self._secrets()
        )
        try:
            return response_from_openai(body)
        except RecordError as exc:
            raise ProviderError("malformed_response", exc.detail) from None
        except ValidationError as exc:
            raise ProviderError("malformed_response", exc.errors()[0]["msg"]) from None

    def _secrets(self) -> tuple[str, ...]:
        return (self._api_key,) if self._api_key else ()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()


async def post_json(
    client: httpx.AsyncClient,
    path: str,
    payload: dict[str, Any],
    headers: dict[str, str],
    timeout: float,
    secrets: tuple[str, ...],
) -> Any:
    """POST JSON and return the decoded answer, or raise a classified ``ProviderError``."""
    try:
        response = await client.post(
            path, content=orjson.dumps(payload), headers=headers, timeout=timeout
        )
    except httpx.TimeoutException:
        raise ProviderError("timeout", f"no answer within {timeout:g} s") from None
    except httpx.HTTPError as exc:  # connect, read and protocol errors, resets
        detail = redact(f"{type(exc).__name__}: {exc}", secrets)
        raise ProviderError("connection", detail) from None
    if response.status_code >= 300:
        detail = redact(f"HTTP {response.status_code}: {response.text[:300]}", secrets)
        raise ProviderError(
            kind_of_status(response.status_code),
            detail,
            status=response.status_code,
            retry_after=parse_retry_after(response.headers.get("retry-after")),
        )
    try:
        return orjson.loads(response.content)
    except orjson.JSONDecodeError as exc:
        raise ProviderError(
            "malformed_response", f"answer is not JSON: {exc}", status=response.status_code
        ) from None
