"""A small server of Langfuse's public API, written from its published reference, serving
real Langfuse trace exports: ``GET /api/public/traces`` (pages from 1, ``limit``,
``fromTimestamp``/``toTimestamp``, ``{"data", "meta"}``) and ``GET /api/public/observations``
(``traceId``, paged the same way), behind Basic auth with a public and a secret key. Its first
answer is a 429 with ``Retry-After``, as a rate-limited Langfuse gives."""

from __future__ import annotations

import base64
import json
import math
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PUBLIC_KEY = "pk-lf-test"
SECRET_KEY = "sk-lf-SECRETSECRET0123456789"


class LangfuseServer(ThreadingHTTPServer):
    """The API over ``exports`` (``{"trace", "observations"}`` each)."""

    def __init__(self, exports: list[dict[str, Any]]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.traces = [
            {**e["trace"], "observations": [o["id"] for o in e["observations"]]} for e in exports
        ]
        self.observations = [o for e in exports for o in e["observations"]]
        self.throttled = False
        self.requests: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: LangfuseServer

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        self.server.requests.append(self.path)
        expected = base64.b64encode(f"{PUBLIC_KEY}:{SECRET_KEY}".encode()).decode()
        if self.headers.get("Authorization") != f"Basic {expected}":
            self._send(401, {"message": "Invalid credentials"})
            return
        if not self.server.throttled:
            self.server.throttled = True
            self._send(429, {"message": "rate limited"}, {"Retry-After": "0.1"})
            return
        if url.path == "/api/public/traces":
            items = [t for t in self.server.traces if _in_window(t["timestamp"], query)]
            items.sort(key=lambda t: t["timestamp"])
        elif url.path == "/api/public/observations":
            items = [o for o in self.server.observations if o["traceId"] == query.get("traceId")]
        else:
            self._send(404, {"message": "not found"})
            return
        page, limit = int(query.get("page", 1)), int(query.get("limit", 50))
        chosen = items[(page - 1) * limit : page * limit]
        meta = {
            "page": page,
            "limit": limit,
            "totalItems": len(items),
            "totalPages": math.ceil(len(items) / limit),
        }
        self._send(200, {"data": chosen, "meta": meta})

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        content = json.dumps(body).encode()
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


def _in_window(timestamp: str, query: dict[str, str]) -> bool:
    moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    if "fromTimestamp" in query and moment < datetime.fromisoformat(query["fromTimestamp"]):
        return False
    return not ("toTimestamp" in query and moment >= datetime.fromisoformat(query["toTimestamp"]))
