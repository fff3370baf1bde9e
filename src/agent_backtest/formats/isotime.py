"""ISO 8601 timestamps in trace records, read as UTC datetimes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from agent_backtest.errors import RecordError


def parse_timestamp(value: Any, what: str) -> datetime | None:
    """An ISO 8601 string as a UTC datetime; None stays None (not recorded).

    A time without a zone is taken as UTC, which is how logging libraries write it. Anything
    else that is not ISO 8601 is a :class:`RecordError`: a wrong time is worse than none.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise RecordError("malformed_timestamp", f"{what} must be an ISO 8601 string")
    try:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    except (ValueError, OverflowError):
        raise RecordError("malformed_timestamp", f"{what} {value!r} is not ISO 8601") from None


def complete_interval(
    started: datetime | None, ended: datetime | None, latency_ms: Any
) -> tuple[datetime | None, datetime | None]:
    """Fill the missing end (or start) of an interval from a recorded latency in milliseconds."""
    if not isinstance(latency_ms, int | float) or isinstance(latency_ms, bool):
        return started, ended
    try:
        latency = timedelta(milliseconds=latency_ms)
        if started is not None and ended is None:
            return started, started + latency
        if ended is not None and started is None:
            return ended - latency, ended
    except (ValueError, OverflowError):
        raise RecordError(
            "malformed_timestamp", f"latency_ms {latency_ms} is out of range"
        ) from None
    return started, ended
