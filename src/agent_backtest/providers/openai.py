"""The OpenAI chat-completions provider, for OpenAI and every compatible server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agent_backtest.errors import RecordError
from agent_backtest.providers.config import ProviderSettings
from agent_backtest.providers.errors import ProviderError, require_answer
from agent_backtest.redaction import drop_secret_fields
from agent_backtest.trace import LLMRequest, LLMResponse
from agent_backtest.trace.openai_wire import chat_payload, response_from_openai

if TYPE_CHECKING:
    from agent_backtest.providers.factory import ProviderSpec
    from agent_backtest.providers.http import JsonEndpoint

# What the body holds besides the recorded request's parameters.
WIRE_KEYS = frozenset({"model", "messages", "tools", "tool_choice", "seed"})


class OpenAIProvider:
    """POSTs ``/chat/completions`` over the provider's own connections."""

    needs_base_url = True

    @classmethod
    def open(cls, spec: ProviderSpec) -> OpenAIProvider:
        """The provider of one model reference (the provider type ``openai``)."""
        return cls(spec.ref.provider, spec.settings, spec.api_key, spec.max_connections)

    def __init__(
        self, name: str, settings: ProviderSettings, api_key: str | None, max_connections: int = 64
    ) -> None:
        if not settings.base_url:
            raise ValueError(f"provider {name} needs a base_url")
        self.name = name
        self.settings = settings
        self.endpoint = settings.base_url.rstrip("/")
        self._api_key = api_key
        self._http = json_endpoint(settings, self.endpoint, max_connections)

    def payload(
        self, request: LLMRequest, model: str, seed: int | None
    ) -> tuple[dict[str, Any], list[str]]:
        """The chat-completions body, with configured removals, and never a recorded request
        field that is a credential or a transport option (readers drop those already; a units
        file written elsewhere may still hold one)."""
        payload, adjustments = chat_payload(
            request, model, seed, self.settings.drop_schema_keys, self.settings.drop_params
        )
        extras = {key: payload.pop(key) for key in list(payload) if key not in WIRE_KEYS}
        for path in drop_secret_fields(extras):
            adjustments.append(f"removed {path}: a credential or transport option")
        payload.update(extras)
        return payload, adjustments

    def set_api_key(self, key: str) -> None:
        """Send this key from now on."""
        self._api_key = key

    async def send(self, payload: dict[str, Any], timeout: float) -> LLMResponse:
        """One POST; every failure becomes a classified ``ProviderError``."""
        headers = {"content-type": "application/json", **self.auth_headers()}
        body = await self._http.post("/chat/completions", payload, headers, timeout, self.secrets())
        return chat_answer(body)

    def auth_headers(self) -> dict[str, str]:
        """The headers that carry the key (none without one)."""
        return {"authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def secrets(self) -> tuple[str, ...]:
        """What error messages must never show."""
        return (self._api_key,) if self._api_key else ()

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()


def chat_answer(body: Any) -> LLMResponse:
    """A decoded chat-completions answer as a canonical response; anything that is not a
    model's answer is a ``malformed_response``."""
    try:
        response = response_from_openai(body)
    except RecordError as exc:
        raise ProviderError("malformed_response", exc.detail) from None
    except ValidationError as exc:
        raise ProviderError("malformed_response", exc.errors()[0]["msg"]) from None
    return require_answer(response)


def json_endpoint(settings: ProviderSettings, base_url: str, max_connections: int) -> JsonEndpoint:
    """The connections of a hosted provider, its answers capped at the settings'
    ``max_answer_bytes``. httpx is imported here, when a provider that needs it is made, not when
    the providers are: its import costs every command ~50 ms."""
    from agent_backtest.providers.http import JsonEndpoint

    return JsonEndpoint(base_url, settings.headers, max_connections, settings.max_answer_bytes)
