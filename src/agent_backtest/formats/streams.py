"""Streamed answers (server-sent events) assembled into the body the same call returns unstreamed.

A client that streams receives its answer as ``data: {...}`` events, ended by ``data: [DONE]``
(chat completions) or by a closing event (Responses, Anthropic). A recording keeps those events
as the response body. Each assembler here rebuilds from them the JSON body that the call would
have returned without ``stream``, so that one converter per API reads both:

- chat completions: ``chat.completion.chunk`` deltas (content, refusal, tool-call fragments
  joined by their ``index``, ``finish_reason``; usage from the last chunk that carries it);
- the Responses API: ``response.completed`` (or ``incomplete``) holds the whole response; without
  it, the output items are rebuilt from ``response.output_item.*`` and the text and argument deltas;
- Anthropic Messages: ``message_start``, ``content_block_start/delta/stop`` (``text_delta``,
  ``input_json_delta``, ``thinking_delta``, ``signature_delta``) and ``message_delta`` (stop
  reason and output usage).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from agent_backtest.errors import RecordError

DONE = "[DONE]"
CHAT = "chat_completions"
RESPONSES = "responses"
ANTHROPIC = "anthropic_messages"
STREAMED_NOTE = "production streamed this answer; it was assembled from {count} events"
_FIELD_PREFIXES = ("data:", "event:", "id:", "retry:", ":")


@dataclass
class StreamedBody:
    """The body assembled from a stream, the API it belongs to and how many events made it."""

    api: str
    body: dict[str, Any]
    events: int

    @property
    def note(self) -> str:
        """What a unit records about this answer: it was streamed, so replay differs in form."""
        return STREAMED_NOTE.format(count=self.events)


def is_event_stream(text: str) -> bool:
    """True when a body is server-sent events rather than one JSON document."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first.startswith(("data:", "event:"))


def parse_events(text: str) -> list[Any]:
    """The JSON payloads of a stream's events, in order, without the ``[DONE]`` marker.

    An event's ``data:`` lines are joined by newlines (the SSE rule); other fields (``event:``,
    ``id:``, comments) carry nothing the payload does not already say.
    """
    payloads: list[Any] = []
    data: list[str] = []
    for line in [*text.splitlines(), ""]:
        if not line.strip():
            if data:
                payloads.extend(_payload("\n".join(data), len(payloads)))
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line.startswith(_FIELD_PREFIXES):
            problem = f"streamed body has a line that is no event field: {line[:40]!r}"
            raise RecordError("undecodable_body", problem)
    return payloads


def _payload(data: str, index: int) -> list[Any]:
    """One event's data as JSON (none for ``[DONE]``)."""
    if data.strip() == DONE:
        return []
    try:
        return [orjson.loads(data)]
    except orjson.JSONDecodeError:
        raise RecordError(
            "undecodable_body", f"event {index} of the streamed body is not JSON"
        ) from None


def assemble(text: str) -> StreamedBody:
    """The body a streamed answer adds up to, told apart by what its events are."""
    return assemble_events(parse_events(text))


def is_event_list(value: Any) -> bool:
    """True for a list of stream events kept as JSON (a log that stored the chunks)."""
    first = value[0] if isinstance(value, list) and value else None
    return isinstance(first, dict) and (
        first.get("object") == "chat.completion.chunk"
        or str(first.get("type", "")).startswith("response.")
        or first.get("type") == "message_start"
    )


def assemble_events(payloads: list[Any]) -> StreamedBody:
    """The body that a stream's event payloads add up to."""
    events = [event for event in payloads if isinstance(event, dict)]
    if not events:
        raise RecordError("undecodable_body", "streamed body holds no events")
    for event in events:
        _raise_for_error(event)
    api = stream_api(events)
    return StreamedBody(api, ASSEMBLERS[api](events), len(events))


def stream_api(events: list[dict[str, Any]]) -> str:
    """Which API sent these events."""
    first = events[0]
    kind = first.get("type")
    if first.get("object") == "chat.completion.chunk" or "choices" in first:
        return CHAT
    if isinstance(kind, str) and kind.startswith("response."):
        return RESPONSES
    if kind in ("message_start", "content_block_start", "ping"):
        return ANTHROPIC
    raise RecordError("undecodable_body", f"a stream of unknown events (first: {kind!r})")


def _raise_for_error(event: dict[str, Any]) -> None:
    """A stream that ended in an error is an error response, not an answer."""
    kind = event.get("type")
    if kind not in ("error", "response.failed") and not event.get("error"):
        return
    response = event.get("response")
    error = event.get("error") or (response.get("error") if isinstance(response, dict) else None)
    # Only the error's type and code: a provider's message can quote parts of a credential.
    named = [str(error[k]) for k in ("type", "code") if isinstance(error, dict) and error.get(k)]
    raise RecordError("error_response", "streamed error: " + (", ".join(named) or str(kind)))


# --- chat completions --------------------------------------------------------------------------


def chat_completion(events: list[dict[str, Any]]) -> dict[str, Any]:
    """A ``chat.completion`` body from its chunks."""
    body: dict[str, Any] = {"object": "chat.completion", "choices": []}
    choices: dict[int, dict[str, Any]] = {}
    for chunk in events:
        for key in ("id", "model", "created", "system_fingerprint"):
            if chunk.get(key) is not None:
                body.setdefault(key, chunk[key])
        if isinstance(chunk.get("usage"), dict):
            body["usage"] = chunk["usage"]  # sent in the last chunk, when asked for
        for delta_choice in chunk.get("choices") or []:
            if isinstance(delta_choice, dict):
                _add_choice_delta(choices, delta_choice)
    body["choices"] = [_finished_choice(choices[index]) for index in sorted(choices)]
    return body


def _add_choice_delta(choices: dict[int, dict[str, Any]], delta_choice: dict[str, Any]) -> None:
    """Add one chunk's delta to the choice it continues."""
    index = delta_choice.get("index", 0)
    choice = choices.setdefault(
        index, {"role": "assistant", "content": [], "refusal": [], "calls": {}, "finish": None}
    )
    delta = delta_choice.get("delta") or {}
    if isinstance(delta.get("role"), str):
        choice["role"] = delta["role"]
    for key in ("content", "refusal"):
        if isinstance(delta.get(key), str):
            choice[key].append(delta[key])
    for fragment in delta.get("tool_calls") or []:
        _add_call_fragment(choice["calls"], fragment)
    if isinstance(delta.get("function_call"), dict):  # the functions API before tools
        _add_call_fragment(choice["calls"], {"index": 0, "function": delta["function_call"]})
    if delta_choice.get("finish_reason") is not None:
        choice["finish"] = delta_choice["finish_reason"]


def _add_call_fragment(calls: dict[int, dict[str, Any]], fragment: Any) -> None:
    """Join a tool-call fragment to the call with the same ``index``."""
    if not isinstance(fragment, dict):
        raise RecordError("malformed_tool_call", "a streamed tool call must be an object")
    call = calls.setdefault(
        fragment.get("index", len(calls)),
        {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
    )
    if fragment.get("id"):
        call["id"] = fragment["id"]
    function = fragment.get("function") or {}
    for key in ("name", "arguments"):
        if isinstance(function.get(key), str):
            call["function"][key] += function[key]


def _finished_choice(choice: dict[str, Any]) -> dict[str, Any]:
    """A choice of the assembled body: the message its deltas spell out."""
    message: dict[str, Any] = {
        "role": choice["role"],
        "content": "".join(choice["content"]) if choice["content"] else None,
    }
    if choice["refusal"]:
        message["refusal"] = "".join(choice["refusal"])
    if choice["calls"]:
        message["tool_calls"] = [choice["calls"][i] for i in sorted(choice["calls"])]
    return {"message": message, "finish_reason": choice["finish"]}


# --- Responses API -----------------------------------------------------------------------------


def responses_body(events: list[dict[str, Any]]) -> dict[str, Any]:
    """A Responses ``response`` body: the closing event's, else rebuilt from the item events."""
    for event in reversed(events):
        if event.get("type") in ("response.completed", "response.incomplete"):
            response = event.get("response")
            if isinstance(response, dict) and isinstance(response.get("output"), list):
                return response
    body: dict[str, Any] = {"object": "response"}
    items: dict[int, dict[str, Any]] = {}
    for event in events:
        response = event.get("response")
        if isinstance(response, dict):
            body.update({k: v for k, v in response.items() if k != "output"})
        _add_item_event(items, event)
    body["output"] = [items[index] for index in sorted(items)]
    return body


def _add_item_event(items: dict[int, dict[str, Any]], event: dict[str, Any]) -> None:
    """Apply one output-item event to the items rebuilt so far."""
    kind, index = event.get("type"), event.get("output_index", 0)
    if kind in ("response.output_item.added", "response.output_item.done"):
        if isinstance(event.get("item"), dict):
            items[index] = dict(event["item"])
    elif kind == "response.output_text.delta" and index in items:
        content = items[index].setdefault("content", [])
        if not content:
            content.append({"type": "output_text", "text": ""})
        content[-1] = {**content[-1], "text": content[-1].get("text", "") + event.get("delta", "")}
    elif kind == "response.function_call_arguments.delta" and index in items:
        item = items[index]
        item["arguments"] = item.get("arguments", "") + event.get("delta", "")


# --- Anthropic Messages ------------------------------------------------------------------------


def anthropic_message(events: list[dict[str, Any]]) -> dict[str, Any]:
    """An Anthropic ``message`` body from its stream events."""
    message: dict[str, Any] = {"type": "message", "role": "assistant", "content": []}
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, list[str]] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            message.update({k: v for k, v in event["message"].items() if k != "content"})
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            blocks[event.get("index", len(blocks))] = dict(event["content_block"])
        elif kind == "content_block_delta":
            _add_block_delta(blocks, partial, event)
        elif kind == "message_delta":
            message.update(event.get("delta") or {})
            usage = event.get("usage")
            if isinstance(usage, dict):
                message["usage"] = {**(message.get("usage") or {}), **usage}
    for index, fragments in partial.items():
        blocks[index]["input"] = _joined_input(fragments, index)
    message["content"] = [blocks[index] for index in sorted(blocks)]
    return message


def _add_block_delta(
    blocks: dict[int, dict[str, Any]], partial: dict[int, list[str]], event: dict[str, Any]
) -> None:
    """Apply one ``content_block_delta`` to the block it continues."""
    index, delta = event.get("index", 0), event.get("delta") or {}
    block = blocks.get(index)
    if block is None:
        raise RecordError("undecodable_body", f"a delta of content block {index} before its start")
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + delta.get("text", "")
    elif kind == "input_json_delta":
        partial.setdefault(index, []).append(delta.get("partial_json", ""))
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
    elif kind == "signature_delta":
        block["signature"] = delta.get("signature")


def _joined_input(fragments: list[str], index: int) -> Any:
    """A tool call's input from its JSON fragments (no fragment text: no arguments)."""
    text = "".join(fragments)
    if not text.strip():
        return {}
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text  # kept raw: the tool call records the parse error


ASSEMBLERS: dict[str, Callable[[list[dict[str, Any]]], dict[str, Any]]] = {
    CHAT: chat_completion,
    RESPONSES: responses_body,
    ANTHROPIC: anthropic_message,
}
