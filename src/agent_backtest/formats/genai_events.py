"""The older GenAI event form (semantic conventions 1.28–1.36) as canonical LLM calls.

Before 1.37 the conversation was recorded as one event per message: ``gen_ai.system.message``,
``gen_ai.user.message``, ``gen_ai.assistant.message`` (with ``tool_calls``),
``gen_ai.tool.message`` (``id`` = the call answered) and one ``gen_ai.choice`` per answer
(``index``, ``finish_reason``, ``message``). The spec gives each event a body in the OpenAI
message shape; on a span event the body is found either as a JSON string in
``gen_ai.event.content`` (Semantic Kernel, Azure SDKs) or spread over the event's attributes
(``content``, ``role``, ``tool_calls``, ``id``, …). The 1.26-era ``gen_ai.content.prompt`` /
``gen_ai.content.completion`` events (``gen_ai.prompt``/``gen_ai.completion`` JSON) are read too.
A span without a choice event whose events end in assistant messages has those as its answer.
Model, usage and parameters are span attributes shared with the current form.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from agent_backtest.errors import RecordError
from agent_backtest.formats import genai_current
from agent_backtest.formats.jsonio import json_text_value
from agent_backtest.formats.messages import read_message
from agent_backtest.formats.span_model import SpanEvent
from agent_backtest.trace import LLMCall, Message, Unusable

if TYPE_CHECKING:
    from agent_backtest.formats.span_model import Span

CONTENT_KEYS = frozenset({"gen_ai.tool.definitions", "events"})
MESSAGE_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE_EVENT = "gen_ai.choice"
PROMPT_EVENT = "gen_ai.content.prompt"
COMPLETION_EVENT = "gen_ai.content.completion"
EVENT_NAMES = frozenset({*MESSAGE_EVENTS, CHOICE_EVENT, PROMPT_EVENT, COMPLETION_EVENT})
# Where instrumentations put the whole event body on a span event.
BODY_KEYS = ("gen_ai.event.content", "event.body", "body")
# Body fields when they are spread over the event's attributes instead.
BODY_FIELDS = ("role", "content", "tool_calls", "id", "name", "index", "finish_reason", "message")

Choice = tuple[int, Message, str | None]


def content_keys(attributes: dict[str, Any]) -> set[str]:
    """The attribute keys this dialect turns into the call (not kept twice in the step)."""
    return {key for key in CONTENT_KEYS if key in attributes}


def has_events(span: Span) -> bool:
    """True when the span records its conversation as GenAI events."""
    return bool(_events(span))


def _events(span: Span) -> list[SpanEvent]:
    """The span's GenAI events: its own, or the list Logfire keeps in an ``events`` attribute
    (Pydantic AI before 1.0), each with its ``event.name``."""
    found = [event for event in span.events if event.name in EVENT_NAMES]
    if found:
        return found
    listed = span.attributes.get("events")
    if isinstance(listed, str) and listed[:1] == "[":
        try:
            listed = orjson.loads(listed)
        except orjson.JSONDecodeError:
            return []
    if not isinstance(listed, list):
        return []
    return [
        SpanEvent(item["event.name"], None, item)
        for item in listed
        if isinstance(item, dict) and item.get("event.name") in EVENT_NAMES
    ]


def llm_call(span: Span) -> LLMCall | None:
    """The call recorded by a span's GenAI events, or None when it has none."""
    events = _events(span)
    if not events:
        return None
    call = genai_current.metadata_only_call(span.attributes)
    choices: list[Choice] = []
    for event in events:
        if event.name in MESSAGE_EVENTS:
            call.request.messages.append(_message(event))
        elif event.name == CHOICE_EVENT:
            choices.append(_choice(_body(event)))
        elif event.name == PROMPT_EVENT:
            prompt = event.attributes.get("gen_ai.prompt")
            if _is_plain_text(prompt):
                call.unusable = Unusable(
                    reason="input_is_flat_string",
                    detail="gen_ai.prompt is one flat string, not a list of messages: "
                    + repr(" ".join(str(prompt).split())[:60]),
                )
            else:
                call.request.messages.extend(_prompt(prompt))
        elif event.name == COMPLETION_EVENT:
            completion = event.attributes.get("gen_ai.completion")
            if _is_plain_text(completion):  # the answer's text, as OpenLit writes it
                choices.append((0, Message(role="assistant", content=completion), None))
            else:
                choices.extend(_completion(completion))
    if choices:
        # Several choices (n > 1): the first one is the answer the agent used.
        _, message, finish_reason = min(choices, key=lambda choice: choice[0])
        call.response = genai_current.response(span.attributes, message, finish_reason)
    else:
        _answer_from_trailing_assistants(call, span.attributes)
    return call


def _answer_from_trailing_assistants(call: LLMCall, attributes: dict[str, Any]) -> None:
    """Make the assistant events that end the conversation the answer, when no choice event
    records one: an SDK recording the OpenAI Agents runner lists the answer as the last
    ``gen_ai.assistant.message`` events, after the input that led to it."""
    messages = call.request.messages
    split = len(messages)
    while split > 0 and messages[split - 1].role == "assistant":
        split -= 1
    trailing = messages[split:]
    if not trailing or split == 0:
        return
    texts = [message.text() for message in trailing if message.text()]
    calls = [tool_call for message in trailing for tool_call in message.tool_calls or []]
    answer = Message(role="assistant", content="\n".join(texts) or None, tool_calls=calls or None)
    call.request.messages = messages[:split]
    call.response = genai_current.response(attributes, answer, None)
    call.notes.append(
        f"the answer is the {len(trailing)} assistant message events that end the span's "
        "events; it records no gen_ai.choice"
    )


def _body(event: SpanEvent) -> dict[str, Any]:
    """The body of an event, from a JSON attribute or its spread attributes."""
    attributes = event.attributes
    for key in BODY_KEYS:
        if key in attributes:
            body = _decoded(attributes[key])
            if not isinstance(body, dict):
                raise RecordError("malformed_event", f"{event.name} {key} is not an object")
            return body
    body = {key: attributes[key] for key in BODY_FIELDS if key in attributes}
    for key in ("tool_calls", "message"):
        if key in body:
            body[key] = _decoded(body[key])
    return body


def _message(event: SpanEvent) -> Message:
    """A message event as a canonical message."""
    body = _body(event)
    raw: dict[str, Any] = {
        "role": body.get("role") or MESSAGE_EVENTS[event.name],
        "content": _content(body.get("content")),
    }
    if body.get("tool_calls"):
        if not isinstance(body["tool_calls"], list):
            raise RecordError("malformed_event", f"{event.name} tool_calls is not a list")
        raw["tool_calls"] = body["tool_calls"]
    if raw["role"] == "tool":
        raw["tool_call_id"] = body.get("id", body.get("tool_call_id"))
    if isinstance(body.get("name"), str):
        raw["name"] = body["name"]
    return read_message(raw)[-1]


def _choice(body: dict[str, Any]) -> Choice:
    """A ``gen_ai.choice`` body as (index, message, finish reason)."""
    message = _decoded(body.get("message")) or {}
    if not isinstance(message, dict):
        raise RecordError("malformed_event", "gen_ai.choice message is not an object")
    raw = {
        **message,
        "role": message.get("role") or "assistant",
        "content": _content(message.get("content")),
    }
    index = genai_current.to_int(body.get("index"), "gen_ai.choice index") or 0
    finish_reason = genai_current.finish_reason_name(body.get("finish_reason"))
    return index, read_message(raw)[-1], finish_reason


def _prompt(value: Any) -> list[Message]:
    """The messages of a 1.26-era ``gen_ai.prompt``."""
    value = _decoded(value)
    if not isinstance(value, list):
        raise RecordError("malformed_event", "gen_ai.prompt is not a list of messages")
    return [message for raw in value for message in read_message(raw)]


def _completion(value: Any) -> list[Choice]:
    """The choices of a 1.26-era ``gen_ai.completion``."""
    value = _decoded(value)
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise RecordError("malformed_event", "gen_ai.completion is not a list")
    choices = []
    for position, item in enumerate(value):
        if isinstance(item, dict) and "message" in item:
            choices.append(_choice({"index": position, **item}))
        else:
            choices.append(_choice({"index": position, "message": item}))
    return choices


def _content(value: Any) -> Any:
    # A structured content object is kept as its JSON text: the model received text.
    """Event content as message content."""
    if isinstance(value, dict):
        return orjson.dumps(value).decode()
    return value


def _is_plain_text(value: Any) -> bool:
    """True for a string that is not JSON (OpenLit writes the prompt and answer as text)."""
    if not isinstance(value, str):
        return False
    try:
        orjson.loads(value)
    except orjson.JSONDecodeError:
        return True
    return False


def _decoded(value: Any) -> Any:
    """A value of an event, decoded when it is JSON text; an event never holds other text."""
    return json_text_value(value, "an event")
