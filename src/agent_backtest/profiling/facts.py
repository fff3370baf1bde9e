"""What the profiler reads off a step: its model, tool name, times, arguments and outcome.

Each accessor returns what the trace recorded or says that it did not; nothing is guessed.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Literal

from agent_backtest.trace import Step, canonical_json

NOT_RECORDED = "(not recorded)"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
Outcome = Literal["success", "failed", "timeout_or_unknown"]
OUTCOMES: tuple[Outcome, ...] = ("success", "failed", "timeout_or_unknown")
TIMEOUT = re.compile(r"time[ -]?out|timed out|deadline exceeded", re.IGNORECASE)
EXCEPTION_NAME = re.compile(r"\s*([A-Za-z_][\w.]*(?:Error|Exception|Timeout|Exceeded))\b")


def model_of(step: Step) -> str:
    """The model that answered an LLM step (else the one asked for), as units name it."""
    call = step.llm
    if call is None:
        return NOT_RECORDED
    answered = call.response.model if call.response is not None else None
    return answered or call.request.model or NOT_RECORDED


def tool_name_of(step: Step) -> str:
    """The name of the tool a tool step ran."""
    if step.tool is not None and step.tool.name:
        return step.tool.name
    return step.name or NOT_RECORDED


def micros(moment: datetime | None) -> int | None:
    """Microseconds since the epoch, exact (no float rounding), or None when not recorded."""
    if moment is None:
        return None
    if moment.tzinfo is None:  # the trace model stores UTC; a naive time is taken as UTC
        moment = moment.replace(tzinfo=UTC)
    elapsed = moment - EPOCH
    return (elapsed.days * 86_400 + elapsed.seconds) * 1_000_000 + elapsed.microseconds


def arguments_key(step: Step) -> bytes | None:
    """The tool call's arguments as canonical JSON, or None when the trace did not record them."""
    tool = step.tool
    if tool is None:
        return None
    if tool.arguments is not None:
        return canonical_json(tool.arguments)
    if tool.arguments_raw is not None:
        return tool.arguments_raw.encode()
    return None


def error_text(step: Step) -> str | None:
    """The error the step recorded, from the step or its tool execution."""
    return step.error or (step.tool.error if step.tool is not None else None)


def has_failed(step: Step) -> bool:
    """True when the step recorded an error status or an error message."""
    return step.status == "error" or error_text(step) is not None


def error_kind(step: Step) -> str:
    """A short name of what went wrong: error.type, a timeout, an exception name, or 'other'."""
    recorded = step.attributes.get("error.type")
    if isinstance(recorded, str) and recorded:
        return "timeout" if TIMEOUT.search(recorded) else recorded
    text = error_text(step)
    if not text:
        return "unspecified"
    if TIMEOUT.search(text):
        return "timeout"
    named = EXCEPTION_NAME.match(text)
    return named.group(1) if named else "other"


def outcome(step: Step) -> Outcome:
    """success, failed, or timeout_or_unknown (a timeout's effect is unknown, like no status)."""
    if has_failed(step):
        return "timeout_or_unknown" if error_kind(step) == "timeout" else "failed"
    return "success" if step.status == "ok" else "timeout_or_unknown"
