"""The OpenAI chat-completions provider, for OpenAI and every compatible server."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agent_backtest.errors import RecordError
from agent_backtest.providers.errors import ProviderError, require_answer
from agent_backtest.providers.hosted import HostedProvider
from agent_backtest.redaction import drop_secret_fields
from agent_backtest.trace import LLMRequest, LLMResponse
from agent_backtest.trace.openai_wire import chat_payload, response_from_openai

# What the body holds besides the recorded request's parameters.
WIRE_KEYS = frozenset({"model", "messages", "tools", "tool_choice", "seed"})


class OpenAIProvider(HostedProvider):
    """POSTs ``/chat/completions`` over the provider's own connections."""

    path = "/chat/completions"

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

    def auth_headers(self) -> dict[str, str]:
        """The headers that carry the key (none without one)."""
        return {"authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def answer(self, body: Any) -> LLMResponse:
        """A chat-completions answer (:func:`chat_answer`)."""
        return chat_answer(body)


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
