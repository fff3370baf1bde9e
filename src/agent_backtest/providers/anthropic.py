"""The Anthropic Messages API provider: canonical requests to ``/v1/messages`` and back.

System and developer messages become the top-level ``system``; assistant tool calls become
``tool_use`` blocks; tool results become ``tool_result`` blocks in a user turn (consecutive ones
merged, as the API wants alternating roles). Parameters with no Messages equivalent are dropped
and the drop is recorded.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agent_backtest.providers.errors import ProviderError, require_answer
from agent_backtest.providers.hosted import HostedProvider
from agent_backtest.trace import LLMRequest, LLMResponse, Message, ToolCall, Usage

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
PASSED_PARAMS = ("temperature", "top_p", "top_k", "metadata")
STOP_REASONS = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
}


class AnthropicProvider(HostedProvider):
    """POSTs ``/v1/messages`` over the provider's own connections."""

    path = "/v1/messages"
    default_base_url = "https://api.anthropic.com"

    def payload(
        self, request: LLMRequest, model: str, seed: int | None
    ) -> tuple[dict[str, Any], list[str]]:
        """The Messages body and what could not be carried over."""
        return messages_payload(request, model, seed)

    def auth_headers(self) -> dict[str, str]:
        """The API version, and the key when there is one."""
        headers = {"anthropic-version": API_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def answer(self, body: Any) -> LLMResponse:
        """A Messages answer, which must hold the model's answer."""
        return require_answer(response_from_messages(body))


def messages_payload(
    request: LLMRequest, model: str, seed: int | None
) -> tuple[dict[str, Any], list[str]]:
    """A canonical request as a Messages API body, and the adjustments made."""
    adjustments: list[str] = []
    system = [m.text() for m in request.messages if m.role in ("system", "developer")]
    payload: dict[str, Any] = {"model": model, "messages": _turns(request.messages)}
    if system:
        payload["system"] = "\n\n".join(system)
    params = dict(request.params)
    max_tokens = params.pop("max_tokens", None) or params.pop("max_completion_tokens", None)
    if max_tokens is None:
        adjustments.append(f"set max_tokens {DEFAULT_MAX_TOKENS} (required by the API)")
    payload["max_tokens"] = max_tokens or DEFAULT_MAX_TOKENS
    stop = params.pop("stop", None)
    if stop:
        payload["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    params.pop("seed", None)  # the run's seed replaces the recorded one (and is not sent)
    for key, value in params.items():
        if key in PASSED_PARAMS:
            payload[key] = value
        else:
            adjustments.append(f"removed parameter {key} (no Messages API equivalent)")
    if seed is not None:
        adjustments.append("seed not sent (the Messages API has none)")
    if request.tools:
        payload["tools"] = [
            {
                "name": t.name,
                "description": t.description or "",
                "input_schema": t.parameters or {"type": "object"},
            }
            for t in request.tools
        ]
        choice = _tool_choice(request.tool_choice)
        if choice is not None:
            payload["tool_choice"] = choice
    return payload, adjustments


def _turns(messages: list[Message]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role in ("system", "developer"):
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": message.text(),
            }
        ]
    blocks: list[dict[str, Any]] = []
    if message.text():
        blocks.append({"type": "text", "text": message.text()})
    for call in message.tool_calls or []:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id or f"toolu_{call.name}",
                "name": call.name,
                "input": call.arguments if isinstance(call.arguments, dict) else {},
            }
        )
    return blocks


def _tool_choice(choice: Any) -> dict[str, Any] | None:
    if choice == "auto":
        return {"type": "auto"}
    if choice == "required":
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        return {"type": "tool", "name": choice["function"].get("name")}
    return None


def response_from_messages(body: Any) -> LLMResponse:
    """A Messages API answer as a canonical response."""
    if not isinstance(body, dict) or not isinstance(body.get("content"), list):
        raise ProviderError("malformed_response", "answer has no content list")
    if body.get("role", "assistant") != "assistant":
        raise ProviderError(
            "malformed_response", f"the answer's role is {str(body['role'])[:40]!r}, not assistant"
        )
    try:
        return _response(body)
    except ValidationError as exc:
        raise ProviderError(
            "malformed_response", f"unexpected answer: {exc.errors()[0]['msg']}"
        ) from None


def _response(body: dict[str, Any]) -> LLMResponse:
    texts, calls = [], []
    for block in body["content"]:
        if not isinstance(block, dict):
            raise ProviderError("malformed_response", "content block is not an object")
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            calls.append(
                ToolCall(
                    id=block.get("id"), name=str(block.get("name")), arguments=block.get("input")
                )
            )
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    stop = body.get("stop_reason")
    return LLMResponse(
        message=Message(
            role="assistant", content="".join(texts) if texts else None, tool_calls=calls or None
        ),
        finish_reason=STOP_REASONS.get(stop, stop) if isinstance(stop, str) else None,
        usage=Usage(
            input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens")
        ),
        model=body.get("model") if isinstance(body.get("model"), str) else None,
        id=body.get("id") if isinstance(body.get("id"), str) else None,
    )
