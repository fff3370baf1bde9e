"""Several dialects' readings of one span, combined into the call the step keeps.

One span often carries more than one convention: a LiteLLM span writes an empty
``gen_ai.output.messages`` beside the real answer under ``gen_ai.completion.0.function_call.*``;
a Langfuse observation keeps the request both as attributes and as its ``input``. Every dialect
that recognises the span gives its reading. The most complete reading is kept (an exact request
and answer body beats any reconstruction; then one with both an input and an answer; then the
one asked first), and each part it lacks is taken from the first other reading that has it. The
call records who read it (``dialect``) and which part came from which other reading
(``filled_from``), so an empty reading never blocks a full one and ``--explain`` can say why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from agent_backtest.trace import LLMCall, LLMRequest, LLMResponse


@dataclass
class Reading:
    """What one dialect found in a span: its call and the attribute keys it read."""

    dialect: str
    call: LLMCall
    keys: set[str] = field(default_factory=set)
    exact: bool = False
    """True when the dialect read the request and answer bodies as sent, not rebuilt."""

    @cached_property
    def found(self) -> str:
        """What the dialect found, in a few words, for ``abt show --explain``; taken before the
        readings are combined (see :func:`combined`), so it says what this dialect alone found."""
        request = self.call.request
        parts = [f"{len(request.messages)} input messages"]
        answer = _answer(self.call)
        if answer is None:
            parts.append("no answer")
        else:
            calls = len(answer.message.tool_calls or [])
            text = "text" if answer.message.text().strip() else ""
            said = " and ".join(filter(None, [text, f"{calls} tool calls" if calls else ""]))
            parts.append(f"an answer with {said}" if said else "an empty answer")
        if request.tools:
            parts.append(f"{len(request.tools)} tools")
        if answer is not None and answer.usage is not None:
            parts.append("usage")
        return f"{self.dialect}: " + ", ".join(parts)


def combined(readings: list[Reading]) -> LLMCall:
    """The call of the most complete reading, with the parts it lacks filled from the others.

    ``readings`` are in the order the dialects were asked; it must not be empty.
    """
    if len(readings) == 1:
        return readings[0].call  # nothing to fill it from: the reading stays as it is
    for reading in readings:
        _ = reading.found  # described now: filling changes the chosen reading's call
    ranked = sorted(readings, key=_rank)
    chosen = ranked[0].call
    for reading in ranked[1:]:
        for part, fill in PARTS.items():
            if part not in chosen.filled_from and fill(chosen, reading.call):
                chosen.filled_from[part] = reading.dialect
    for part, dialect in chosen.filled_from.items():
        chosen.notes.append(
            f"{part} taken from the {dialect} reading; the {chosen.dialect} reading had none"
        )
    return chosen


def _rank(reading: Reading) -> tuple[bool, int]:
    """Sort key: exact bodies first, then readings holding more of an input and an answer.

    ``sorted`` is stable, so among equals the dialect asked first stays first.
    """
    call = reading.call
    essentials = bool(call.request.messages) + (_answer(call) is not None)
    return (not reading.exact, -essentials)


def _answer(call: LLMCall) -> LLMResponse | None:
    """The call's response when it says something (text or a tool call), else None."""
    response = call.response
    if response is None:
        return None
    if not response.message.text().strip() and not response.message.tool_calls:
        return None
    return response


def _fill_messages(chosen: LLMCall, other: LLMCall) -> bool:
    """Take the other reading's input messages when the chosen one has none."""
    if chosen.request.messages or not other.request.messages:
        return False
    chosen.request.messages = other.request.messages
    return True


def _fill_answer(chosen: LLMCall, other: LLMCall) -> bool:
    """Take the other reading's answer when the chosen one has none or an empty one; what the
    chosen response recorded around it (usage, id, model) stays."""
    found = _answer(other)
    if _answer(chosen) is not None or found is None:
        return False
    if chosen.response is None:
        chosen.response = found
    else:
        chosen.response.message = found.message
        chosen.response.finish_reason = found.finish_reason or chosen.response.finish_reason
    return True


def _fill_params(chosen: LLMCall, other: LLMCall) -> bool:
    """Add the request parameters (stop sequences, temperature, …) only the other recorded."""
    missing = {
        key: value
        for key, value in other.request.params.items()
        if key not in chosen.request.params
    }
    chosen.request.params.update(missing)
    return bool(missing)


Filler = Callable[[LLMCall, LLMCall], bool]


def _field(owner: Callable[[LLMCall], Any], name: str) -> Filler:
    """A filler of one field of the request or the answer (``owner`` picks which) that the
    chosen reading did not record (None: an empty tool list records that none were offered);
    a reading without an answer has no answer field to take or to fill."""

    def fill(chosen: LLMCall, other: LLMCall) -> bool:
        into, source = owner(chosen), owner(other)
        if into is None or source is None:
            return False
        found = getattr(source, name)
        if getattr(into, name) is not None or found is None:
            return False
        setattr(into, name, found)
        return True

    return fill


def _request(call: LLMCall) -> LLMRequest:
    """The request of a call."""
    return call.request


def _response(call: LLMCall) -> LLMResponse | None:
    """The answer of a call, if it has one."""
    return call.response


# The parts of a call one reading can lend another, in the order they are filled.
PARTS: dict[str, Filler] = {
    "input messages": _fill_messages,
    "answer": _fill_answer,
    "tools": _field(_request, "tools"),
    "tool_choice": _field(_request, "tool_choice"),
    "request parameters": _fill_params,
    "model": _field(_request, "model"),
    "usage": _field(_response, "usage"),
    "finish_reason": _field(_response, "finish_reason"),
}
