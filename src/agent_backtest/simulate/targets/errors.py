"""The error a target raises when a turn cannot be completed: a transport or protocol failure."""

from __future__ import annotations

from agent_backtest.errors import bounded
from agent_backtest.redaction import redact


class TargetError(Exception):
    """A turn that got no usable answer; ``kind`` names the failure (timeout, connection, …).

    The detail is redacted as it is made: it may quote an answer that echoes a header.
    """

    def __init__(self, kind: str, detail: str, secrets: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.detail = bounded(redact(detail, secrets), 300)
        super().__init__(f"{kind}: {self.detail}")
