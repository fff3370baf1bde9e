"""Classified model-call errors: infrastructure failures, never model answers."""

from __future__ import annotations

from typing import Literal, get_args

from agent_backtest.redaction import redact
from agent_backtest.trace import LLMResponse

ErrorKind = Literal[
    "http_401",
    "http_429",
    "http_4xx",
    "http_5xx",
    "timeout",
    "connection",
    "malformed_response",
    "context_length",
    "batch_expired",
    "answer_too_large",
]
ERROR_KINDS: tuple[ErrorKind, ...] = get_args(ErrorKind)


class ProviderError(Exception):
    """A call that produced no model answer, with its kind, for retries and for the record."""

    def __init__(
        self,
        kind: ErrorKind,
        detail: str,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.kind = kind
        self.detail = redact(detail)[:500]
        self.status = status
        self.retry_after = retry_after
        super().__init__(f"{kind}: {self.detail}")


def kind_of_status(status: int) -> ErrorKind:
    """The error kind of a non-2xx HTTP status."""
    if status == 401:
        return "http_401"
    if status == 429:
        return "http_429"
    if status >= 500:
        return "http_5xx"
    return "http_4xx"


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (seconds form; HTTP dates are rare from APIs)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def require_answer(response: LLMResponse) -> LLMResponse:
    """``response`` when it is a model's answer: an assistant message with text or tool calls.

    Anything else that came back with a success status (a ``user`` message, an empty one) is a
    ``malformed_response``: retried, then recorded as an infrastructure error, never scored.
    """
    message = response.message
    if message.role != "assistant":
        raise ProviderError(
            "malformed_response", f"the answer is a {message.role} message, not an assistant's"
        )
    if not message.text() and not message.tool_calls:
        raise ProviderError("malformed_response", "the answer has neither text nor tool calls")
    return response
