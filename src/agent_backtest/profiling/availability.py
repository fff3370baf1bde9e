"""Saying whether a figure is available and, when it is not, why, in words a person reads.

A figure computed over items that each may lack a value (a time, a token count, an argument)
carries the count of items that lacked it, by reason. The reason reads "12 of 40 tool calls have
no end time": how many, out of how many, which items, what they lack.
"""

from __future__ import annotations

from collections import Counter
from typing import Any


def missing_reason(missing: Counter[str], of: int, noun: str) -> str | None:
    """ "12 of 40 tool calls have no end time; …" for each reason, or None when nothing lacks."""
    parts = [f"{count} of {of} {noun} {why}" for why, count in sorted(missing.items()) if count]
    return "; ".join(parts) or None


def availability(missing: Counter[str], of: int, noun: str) -> dict[str, Any]:
    """``{available, reason}`` of a figure over ``of`` items, some of which lack a value."""
    if of == 0:
        return {"available": False, "reason": f"no {noun}"}
    reason = missing_reason(missing, of, noun)
    return {"available": reason is None, "reason": reason}


def unavailable(reason: str) -> dict[str, Any]:
    """``{available: false, reason}`` of a figure that cannot be computed at all."""
    return {"available": False, "reason": reason}
