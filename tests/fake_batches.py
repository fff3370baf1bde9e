"""A real HTTP server on 127.0.0.1 speaking OpenAI's Batch API and Anthropic's Message Batches,
and both providers' live endpoints, all answering from one scripted table.

OpenAI: ``POST /v1/files`` (multipart, purpose ``batch``), ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``GET /v1/files/{id}/content``, and live ``POST /v1/chat/completions``.
Anthropic: ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}`` (with its
``results_url``), ``GET /v1/messages/batches/{id}/results``, and live ``POST /v1/messages``.

A request's answer depends only on its body (``answer`` for chat completions, the same rule for
Messages), so a live call and a batch request of the same body get the same answer. ``faults``
scripts a batch request's result by its ``custom_id``: ``error_400``, ``error_500``,
``malformed`` (a 200 that is no answer), ``expired`` and ``canceled``. While ``hold`` is set a
batch stays in progress; ``created`` logs every batch made, with its requests.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fake_openai import answer as chat_answer
from tests.servers import serve_in_thread, stop_serving


class _Server(ThreadingHTTPServer):
    """Quiet about clients that hang up mid-request (a test kills them)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Nothing to report."""


class FakeBatches:
    """The server and what it saw; use as a context manager."""

    def __init__(self, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.hold = False
        self.faults: dict[str, str] = {}
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.created: list[dict[str, Any]] = []
        self.polls = 0
        self.live = 0
        self.refused_keys = 0
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True

    @property
    def root(self) -> str:
        """``http://127.0.0.1:PORT``: Anthropic's base URL."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: OpenAI's base URL."""
        return self.root + "/v1"

    def __enter__(self) -> FakeBatches:
        serve_in_thread(self._server)
        return self

    def __exit__(self, *exc: object) -> None:
        stop_serving(self._server)

    def requests_sent(self) -> list[str]:
        """Every custom_id of every batch made, in order."""
        return [custom_id for batch in self.created for custom_id in batch["custom_ids"]]

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{len(self.files) + len(self.batches) + 1:04d}"

    def _authorised(self, headers: Any) -> bool:
        if self.api_key is None:
            return True
        given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        return given == self.api_key

    # OpenAI

    def upload(self, content: bytes) -> dict[str, Any]:
        """A file of batch input."""
        with self._lock:
            file_id = self._new_id("file-")
            self.files[file_id] = content
        return {"id": file_id, "object": "file", "purpose": "batch", "bytes": len(content)}

    def create_openai(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """A batch of an uploaded file's requests."""
        content = self.files.get(body.get("input_file_id", ""))
        if content is None or body.get("endpoint") != "/v1/chat/completions":
            return 400, {"error": {"message": "unknown input file or endpoint"}}
        lines = [json.loads(line) for line in content.splitlines()]
        with self._lock:
            batch_id = self._new_id("batch_")
            self.batches[batch_id] = {"api": "openai", "lines": lines, "status": "in_progress"}
            self.created.append(
                {"id": batch_id, "api": "openai", "custom_ids": [x["custom_id"] for x in lines]}
            )
        return 200, self.openai_batch(batch_id, poll=False)

    def openai_batch(self, batch_id: str, poll: bool = True) -> dict[str, Any]:
        """The batch object; a look at it (``poll``) ends it (with its output and error files)
        unless held."""
        batch = self.batches[batch_id]
        with self._lock:
            self.polls += poll
            if poll and not self.hold and batch["status"] == "in_progress":
                self._finish_openai(batch_id, batch)
        return {
            "id": batch_id,
            "object": "batch",
            "status": batch["status"],
            "output_file_id": batch.get("output"),
            "error_file_id": batch.get("errors"),
            "request_counts": {"total": len(batch["lines"])},
        }

    def _finish_openai(self, batch_id: str, batch: dict[str, Any]) -> None:
        output, errors = [], []
        for line in batch["lines"]:
            custom_id, body = line["custom_id"], line["body"]
            fault = self.faults.get(custom_id)
            result: dict[str, Any] = {"id": f"req_{custom_id}", "custom_id": custom_id}
            if fault in ("expired", "canceled"):
                code = "batch_expired" if fault == "expired" else "batch_cancelled"
                errors.append(
                    {**result, "response": None, "error": {"code": code, "message": fault}}
                )
                continue
            status, answer = 200, chat_answer(body)
            if fault == "error_400":
                status, answer = 400, {"error": {"message": "bad request", "type": "invalid"}}
            elif fault == "error_500":
                status, answer = 500, {"error": {"message": "server fault", "type": "server"}}
            elif fault == "malformed":
                answer = {"choices": []}
            result.update(response={"status_code": status, "body": answer}, error=None)
            (output if status == 200 else errors).append(result)
        batch["status"] = "completed"
        for key, records in (("output", output), ("errors", errors)):
            if records:
                file_id = f"file-{key}-{batch_id}"
                self.files[file_id] = b"".join(json.dumps(r).encode() + b"\n" for r in records)
                batch[key] = file_id

    # Anthropic

    def create_anthropic(self, body: dict[str, Any]) -> dict[str, Any]:
        """A message batch of the requests given."""
        requests = body["requests"]
        for request in requests:
            assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", request["custom_id"])
        with self._lock:
            batch_id = self._new_id("msgbatch_")
            self.batches[batch_id] = {
                "api": "anthropic",
                "lines": requests,
                "status": "in_progress",
            }
            self.created.append(
                {
                    "id": batch_id,
                    "api": "anthropic",
                    "custom_ids": [r["custom_id"] for r in requests],
                }
            )
        return self.anthropic_batch(batch_id, poll=False)

    def anthropic_batch(self, batch_id: str, poll: bool = True) -> dict[str, Any]:
        """The batch; a look at it (``poll``) ends it (with its results URL) unless held."""
        batch = self.batches[batch_id]
        with self._lock:
            self.polls += poll
            if poll and not self.hold:
                batch["status"] = "ended"
        ended = batch["status"] == "ended"
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": batch["status"],
            "results_url": f"{self.root}/v1/messages/batches/{batch_id}/results" if ended else None,
        }

    def anthropic_results(self, batch_id: str) -> bytes:
        """The results JSONL of an ended batch."""
        lines = []
        for request in self.batches[batch_id]["lines"]:
            custom_id, fault = request["custom_id"], self.faults.get(request["custom_id"])
            result: dict[str, Any] = {
                "type": "succeeded",
                "message": messages_answer(request["params"]),
            }
            if fault in ("expired", "canceled"):
                result = {"type": fault}
            elif fault in ("error_400", "error_500"):
                kind = "invalid_request_error" if fault == "error_400" else "api_error"
                error = {"type": "error", "error": {"type": kind, "message": fault}}
                result = {"type": "errored", "error": error}
            elif fault == "malformed":
                result["message"] = {"content": "not a list"}
            lines.append(json.dumps({"custom_id": custom_id, "result": result}).encode() + b"\n")
        return b"".join(lines)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers["content-length"]))
                if not server._authorised(self.headers):
                    server.refused_keys += 1
                    return self._json(401, {"error": {"message": "invalid key"}})
                if self.path == "/v1/files":
                    return self._json(200, server.upload(multipart_file(self.headers, data)))
                body = json.loads(data)
                if self.path == "/v1/batches":
                    return self._json(*server.create_openai(body))
                if self.path == "/v1/messages/batches":
                    return self._json(200, server.create_anthropic(body))
                server.live += 1
                if self.path == "/v1/chat/completions":
                    return self._json(200, chat_answer(body))
                if self.path == "/v1/messages":
                    return self._json(200, messages_answer(body))
                return self._json(404, {"error": {"message": "no such path"}})

            def do_GET(self) -> None:
                if not server._authorised(self.headers):
                    server.refused_keys += 1
                    return self._json(401, {"error": {"message": "invalid key"}})
                path = self.path
                batch = re.search(r"batches/([\w-]+)", path)
                if batch and batch[1] not in server.batches:
                    return self._json(404, {"error": {"message": "no such batch"}})
                if match := re.fullmatch(r"/v1/batches/([\w-]+)", path):
                    return self._json(200, server.openai_batch(match[1]))
                if match := re.fullmatch(r"/v1/files/([\w-]+)/content", path):
                    return self._raw(server.files[match[1]])
                if match := re.fullmatch(r"/v1/messages/batches/([\w-]+)/results", path):
                    return self._raw(server.anthropic_results(match[1]))
                if match := re.fullmatch(r"/v1/messages/batches/([\w-]+)", path):
                    return self._json(200, server.anthropic_batch(match[1]))
                return self._json(404, {"error": {"message": "no such path"}})

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                self._raw(json.dumps(payload).encode(), status, "application/json")

            def _raw(
                self, data: bytes, status: int = 200, kind: str = "application/binary"
            ) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def multipart_file(headers: Any, data: bytes) -> bytes:
    """The ``file`` part of a multipart upload whose ``purpose`` is ``batch``."""
    boundary = headers["content-type"].split("boundary=", 1)[1].strip('"').encode()
    parts: dict[str, bytes] = {}
    for part in data.split(b"--" + boundary)[1:-1]:
        head, _, content = part.partition(b"\r\n\r\n")
        name = re.search(rb'name="([^"]+)"', head)
        assert name is not None
        parts[name[1].decode()] = content.removesuffix(b"\r\n")
    assert parts["purpose"] == b"batch", parts.get("purpose")
    return parts["file"]


def messages_answer(params: dict[str, Any]) -> dict[str, Any]:
    """A deterministic Messages answer: a tool call when tools are offered, else text."""
    digest = hashlib.sha256(json.dumps(params["messages"], sort_keys=True).encode()).hexdigest()
    if params.get("tools"):
        tool = params["tools"][int(digest, 16) % len(params["tools"])]["name"]
        content = [
            {
                "type": "tool_use",
                "id": f"toolu_{digest[:12]}",
                "name": tool,
                "input": {"ref": digest[:8]},
            }
        ]
        stop = "tool_use"
    else:
        content, stop = [{"type": "text", "text": f"answer {digest[:16]}"}], "end_turn"
    return {
        "id": f"msg_{digest[:10]}",
        "type": "message",
        "role": "assistant",
        "model": params.get("model"),
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": len(json.dumps(params)) // 4, "output_tokens": 12},
    }
