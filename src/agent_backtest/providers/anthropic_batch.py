"""Anthropic's Message Batches: the Messages requests of a replay in one ``POST``.

Each request's ``params`` are the body the live provider would POST (``messages_payload``), and
each answer is parsed by the live parser (``response_from_messages``), so a batch answer is
recorded exactly as a live one. The batch is made (``POST /v1/messages/batches``), polled
(``GET /v1/messages/batches/{id}``) and, once ended, its results read from its ``results_url``.
"""

from __future__ import annotations

from typing import Any

import orjson

from agent_backtest.providers.anthropic import response_from_messages
from agent_backtest.providers.batches import (
    BatchAnswer,
    BatchAPI,
    BatchLimits,
    BatchState,
    Submitted,
    error_detail,
)
from agent_backtest.providers.errors import ErrorKind, ProviderError, require_answer

# The Message Batches guide: a batch holds at most 100,000 requests and 256 MB, whichever
# comes first.
LIMITS = BatchLimits(requests=100_000, bytes=256 * 1024 * 1024)
PATH = "/v1/messages/batches"
# The error types of the API's error reference, as the live path would classify their status.
ERROR_KINDS: dict[str, tuple[ErrorKind, int]] = {
    "invalid_request_error": ("http_4xx", 400),
    "authentication_error": ("http_401", 401),
    "permission_error": ("http_4xx", 403),
    "not_found_error": ("http_4xx", 404),
    "request_too_large": ("http_4xx", 413),
    "rate_limit_error": ("http_429", 429),
    "api_error": ("http_5xx", 500),
    "overloaded_error": ("http_5xx", 529),
}


class AnthropicBatches(BatchAPI):
    """The Message Batches endpoints of an Anthropic provider."""

    limits = LIMITS

    def line(self, custom_id: str, payload: dict[str, Any]) -> bytes:
        """One entry of the batch's ``requests``."""
        return orjson.dumps({"custom_id": custom_id, "params": payload})

    async def submit(self, lines: list[bytes]) -> Submitted:
        """Make the batch (the entries are joined as they were encoded, not parsed again)."""
        content = b'{"requests":[' + b",".join(lines) + b"]}"
        created = await self._http.json(
            "POST", PATH, content=content, headers={"content-type": "application/json"}
        )
        batch_id = created.get("id") if isinstance(created, dict) else None
        if not isinstance(batch_id, str):
            raise ProviderError("malformed_response", f"{PATH}: the answer has no id")
        return Submitted(batch_id)

    async def state(self, batch: Submitted) -> BatchState:
        """The batch's processing status, and once ended, its results URL."""
        body = await self._http.json("GET", f"{PATH}/{batch.id}")
        status = body.get("processing_status") if isinstance(body, dict) else None
        if not isinstance(status, str):
            raise ProviderError("malformed_response", f"{PATH}/{batch.id}: no processing_status")
        url = body.get("results_url")
        return BatchState(status, status == "ended", (url,) if isinstance(url, str) else ())

    def result_path(self, result_file: str) -> str:
        """The results URL itself."""
        return result_file

    def answer(self, custom_id: str, record: dict[str, Any]) -> BatchAnswer:
        """A results line's ``result``: the message, or why there is none."""
        result = record.get("result")
        kind = result.get("type") if isinstance(result, dict) else None
        if kind == "succeeded":
            try:
                response = require_answer(response_from_messages(result.get("message")))
            except ProviderError as failure:
                return BatchAnswer(custom_id, error=failure)
            return BatchAnswer(custom_id, response=response)
        if kind == "canceled":
            return BatchAnswer(custom_id)
        if kind == "expired":
            failure = ProviderError("batch_expired", "not run before the batch's window ended")
            return BatchAnswer(custom_id, error=failure)
        if kind == "errored":
            return BatchAnswer(custom_id, error=_error(result.get("error")))
        return BatchAnswer(
            custom_id, error=ProviderError("malformed_response", f"unknown result type {kind!r}")
        )


def _error(body: Any) -> ProviderError:
    """An ``errored`` result's error, with the kind its type has on a live call."""
    inner = body.get("error") if isinstance(body, dict) else None
    name = inner.get("type") if isinstance(inner, dict) else None
    kind, status = ERROR_KINDS.get(str(name), ("http_4xx", None))
    return ProviderError(kind, error_detail(body), status)
