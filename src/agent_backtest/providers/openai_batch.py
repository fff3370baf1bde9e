"""OpenAI's Batch API: the chat-completions requests of a replay as one uploaded JSONL file.

Each line carries the body the live provider would POST (``OpenAIProvider.payload``), and each
answer is parsed by the live provider's parser (``chat_answer``), so a batch answer is recorded
exactly as a live one. The file is uploaded (``POST /files``, purpose ``batch``), the batch made
from it (``POST /batches``), polled (``GET /batches/{id}``), and its output and error files read
(``GET /files/{id}/content``).
"""

from __future__ import annotations

from typing import Any

import orjson

from agent_backtest.providers.batches import (
    BatchAnswer,
    BatchAPI,
    BatchLimits,
    BatchState,
    Submitted,
    error_detail,
)
from agent_backtest.providers.errors import ProviderError, kind_of_status
from agent_backtest.providers.openai import chat_answer

# The Batch API reference: an input file holds at most 50,000 requests and 200 MB.
LIMITS = BatchLimits(requests=50_000, bytes=200 * 1024 * 1024)
ENDPOINT = "/v1/chat/completions"
ENDED = frozenset({"completed", "expired", "cancelled", "failed"})


class OpenAIBatches(BatchAPI):
    """The batch endpoints next to an OpenAI provider's chat completions."""

    limits = LIMITS

    def line(self, custom_id: str, payload: dict[str, Any]) -> bytes:
        """One request line of the input file."""
        return orjson.dumps(
            {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": payload}
        )

    async def submit(self, lines: list[bytes]) -> Submitted:
        """Upload the input file and make a batch of it."""
        content = b"\n".join(lines) + b"\n"
        uploaded = await self._http.json(
            "POST",
            "/files",
            data={"purpose": "batch"},
            files={"file": ("abt-batch.jsonl", content, "application/jsonl")},
        )
        file_id = _text(uploaded, "id", "/files")
        created = await self._http.json(
            "POST",
            "/batches",
            json={"input_file_id": file_id, "endpoint": ENDPOINT, "completion_window": "24h"},
        )
        return Submitted(_text(created, "id", "/batches"), file_id)

    async def state(self, batch: Submitted) -> BatchState:
        """The batch's status, and once it ended, its output and error files."""
        body = await self._http.json("GET", f"/batches/{batch.id}")
        status = _text(body, "status", f"/batches/{batch.id}")
        files = tuple(
            body[key]
            for key in ("output_file_id", "error_file_id")
            if isinstance(body.get(key), str)
        )
        return BatchState(status, status in ENDED, files, _problem(body))

    def result_path(self, result_file: str) -> str:
        """The content of an output or error file."""
        return f"/files/{result_file}/content"

    def answer(self, custom_id: str, record: dict[str, Any]) -> BatchAnswer:
        """A line of an output or error file: its ``error``, else its ``response``."""
        error = record.get("error")
        if isinstance(error, dict):
            code, message = str(error.get("code")), str(error.get("message") or "")
            if code == "batch_cancelled":
                return BatchAnswer(custom_id)
            if code == "batch_expired":
                return BatchAnswer(custom_id, error=ProviderError("batch_expired", message))
            return BatchAnswer(custom_id, error=ProviderError("http_4xx", f"{code}: {message}"))
        response = record.get("response")
        if not isinstance(response, dict) or not isinstance(response.get("status_code"), int):
            failure = ProviderError(
                "malformed_response", "a result line with neither answer nor error"
            )
            return BatchAnswer(custom_id, error=failure)
        status, body = response["status_code"], response.get("body")
        if status >= 300:
            detail = f"HTTP {status}: {error_detail(body)}"
            failure = ProviderError(kind_of_status(status), detail, status)
            return BatchAnswer(custom_id, error=failure)
        try:
            return BatchAnswer(custom_id, response=chat_answer(body))
        except ProviderError as failure:
            return BatchAnswer(custom_id, error=failure)


def _text(body: Any, key: str, path: str) -> str:
    """``body[key]``, which must be a string."""
    value = body.get(key) if isinstance(body, dict) else None
    if not isinstance(value, str):
        raise ProviderError("malformed_response", f"{path}: the answer has no {key}")
    return value


def _problem(body: dict[str, Any]) -> str | None:
    """The validation errors of a failed batch, as one line."""
    errors = body.get("errors")
    data = errors.get("data") if isinstance(errors, dict) else None
    if not isinstance(data, list) or not data:
        return None
    messages = [
        f"line {item.get('line')}: {item.get('message')}"
        if item.get("line")
        else item.get("message")
        for item in data
        if isinstance(item, dict)
    ]
    return "; ".join(str(message) for message in messages)[:500]
