"""The HTTP client every backend pull and push goes through: one request at a time, rate
limited, ``Retry-After`` honoured, and failures told as one line that names the fix.

Keys travel only in headers; an error message shows the endpoint without any user info in the
URL and a server's answer through :func:`agent_backtest.redaction.redact`, so no secret is
printed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from agent_backtest.errors import UserError, bounded
from agent_backtest.redaction import redact

RETRIED_STATUSES = frozenset({429, 502, 503, 504})
ATTEMPTS = 4
LONGEST_WAIT_SECONDS = 60.0
TIMEOUT_SECONDS = 60.0
DETAIL_CHARS = 200


def shown_url(url: str) -> str:
    """``url`` without user name and password, as error messages show it."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def check_endpoint(endpoint: str) -> str:
    """An ``http(s)://`` base URL without its trailing slash."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(
            f"{shown_url(endpoint) or endpoint!r} is not an http(s) URL, such as "
            "http://127.0.0.1:6006",
            "endpoint",
        )
    return endpoint.rstrip("/")


class RestClient:
    """JSON over HTTP to one backend, at most ``requests_per_second``."""

    def __init__(
        self,
        service: str,
        endpoint: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: tuple[str, str] | None = None,
        requests_per_second: float = 10.0,
        key_hint: str = "",
        secrets: tuple[str, ...] = (),
    ) -> None:
        self.service = service
        self.endpoint = check_endpoint(endpoint)
        self.interval = 1.0 / requests_per_second if requests_per_second > 0 else 0.0
        self.key_hint = key_hint
        self.secrets = tuple(secret for secret in secrets if secret)
        self.next_at = 0.0
        self.http = httpx.Client(
            base_url=self.endpoint,
            headers=dict(headers or {}),
            auth=auth,
            timeout=TIMEOUT_SECONDS,
        )

    def __enter__(self) -> RestClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.http.close()

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> httpx.Response:
        """``GET path``; an answer other than 2xx (and 404) is a UserError."""
        return self.send("GET", path, params=params)

    def post(self, path: str, body: Any, params: Mapping[str, Any] | None = None) -> httpx.Response:
        """``POST path`` with a JSON body; an answer other than 2xx (and 404) is a UserError."""
        return self.send("POST", path, params=params, json=body)

    def send(self, method: str, path: str, **options: Any) -> httpx.Response:
        """One request, retried on 429 and 5xx gateway errors after the wait the server asks
        for; 404 is returned for the caller to name what is missing."""
        for attempt in range(1, ATTEMPTS + 1):
            self._wait_turn()
            try:
                response = self.http.request(method, path, **options)
            except httpx.TransportError as exc:
                raise UserError(
                    f"cannot reach {self.service} at {shown_url(self.endpoint)} "
                    f"({type(exc).__name__}): is it running, and is the URL right?",
                    "endpoint",
                ) from None
            if response.status_code in RETRIED_STATUSES and attempt < ATTEMPTS:
                self.next_at = time.monotonic() + _retry_after(response, attempt)
                continue
            if response.status_code in (401, 403):
                raise UserError(
                    f"{self.service} at {shown_url(self.endpoint)} refused the credentials "
                    f"(HTTP {response.status_code}): {self.key_hint}"
                )
            if response.is_success or response.status_code == 404:
                return response
            raise UserError(
                f"{self.service} answered HTTP {response.status_code} to {method} {path}: "
                f"{self.detail(response)}"
            )
        raise AssertionError("unreachable: the last attempt returns or raises")

    def detail(self, response: httpx.Response) -> str:
        """The server's own words about a failed request, short and without secrets."""
        return bounded(redact(response.text.strip(), self.secrets), DETAIL_CHARS) or "no detail"

    def _wait_turn(self) -> None:
        """Sleep until the rate limit (or a server's Retry-After) lets the next request go."""
        now = time.monotonic()
        if self.next_at > now:
            time.sleep(self.next_at - now)
        self.next_at = max(self.next_at, time.monotonic()) + self.interval


def _retry_after(response: httpx.Response, attempt: int) -> float:
    """Seconds to wait before the next attempt: the server's ``Retry-After``, else backoff."""
    value = response.headers.get("Retry-After", "")
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.5 * 2 ** (attempt - 1)
    return min(max(seconds, 0.0), LONGEST_WAIT_SECONDS)
