"""Chat messages and answers in every shape agent frameworks record, as canonical messages.

Spans and observations carry a conversation in whatever shape the framework or instrumentation
had at hand: OpenAI chat messages, OTel GenAI ``parts``, Gemini ``contents`` (role ``model``,
``functionCall``/``functionResponse`` parts), LangChain messages (``type`` ``human``/``ai``,
``additional_kwargs.tool_calls``, the ``lc`` constructor form, a tool result whose role is the
tool's name), Anthropic content blocks (``tool_use``/``tool_result``/``thinking``), the Vercel
AI SDK's parts (``tool-call``/``tool-result``) and OpenAI Responses items (``function_call``,
``function_call_output``, ``reasoning``). One reader for all of them keeps every dialect honest
in the same way: a shape it does not know is a named :class:`RecordError`, never a guess.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson

from agent_backtest.errors import RecordError
from agent_backtest.trace import ContentPart, LLMRequest, Message, ToolCall, ToolDef, Usage
from agent_backtest.trace.openai_wire import (
    ROLES,
    TRANSPORT_KEYS,
    first_count,
    tool_def_from_openai,
    usage_from_openai,
)

ROLE_NAMES = {
    "human": "user",
    "ai": "assistant",
    "model": "assistant",
    "function": "tool",
    "chatbot": "assistant",
    "bot": "assistant",
}
LANGCHAIN_CLASSES = {
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "FunctionMessage": "tool",
    "HumanMessageChunk": "user",
    "AIMessageChunk": "assistant",
}
TEXT_TYPES = ("text", "input_text", "output_text")
CALL_TYPES = ("tool_call", "tool-call", "tool_use", "function_call")
RESULT_TYPES = ("tool_call_response", "tool-result", "tool_result", "function_call_output")
REASONING_TYPES = ("reasoning", "thinking")
MEDIA_TYPES = ("image_url", "input_audio", "file", "blob", "uri", "image", "audio", "refusal")
PART_TYPES = (*TEXT_TYPES, *CALL_TYPES, *RESULT_TYPES, *REASONING_TYPES, *MEDIA_TYPES)
# Finish reasons of other APIs under the OpenAI names the canonical model uses.
FINISH_REASONS = {
    "tool_call": "tool_calls",
    "tool-calls": "tool_calls",
    "tool_use": "tool_calls",
    "function_call": "tool_calls",
    "stop": "stop",
    "STOP": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "completed": "stop",
    "MAX_TOKENS": "length",
    "max_tokens": "length",
    "content-filter": "content_filter",
    "SAFETY": "content_filter",
}


def split_tools(raw: Any, client_types: frozenset[str | None]) -> tuple[list[ToolDef], list[Any]]:
    """A recorded request body's tools: those of ``client_types`` (the ``type`` the API gives a
    tool the caller runs) as definitions, the hosted ones (web search, a code runner, …) set
    aside. A recorded body is complete: no tools key means no tools were offered ([])."""
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        raise RecordError("malformed_tool_definition", "tools must be a list")
    client: list[ToolDef] = []
    hosted: list[Any] = []
    for tool in raw:
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind is not None and not isinstance(kind, str):
            raise RecordError("malformed_tool_definition", "a tool's type must be a string")
        if kind not in client_types:
            hosted.append(tool)
        else:
            client.append(tool_def_from_openai(tool))
    return client, hosted


def body_request(
    payload: dict[str, Any],
    messages: list[Message],
    tool_choice: Any,
    *,
    request_keys: tuple[str, ...],
    client_tool_types: frozenset[str | None],
    hosted_kind: str,
) -> tuple[LLMRequest, list[str]]:
    """A recorded request body of an API whose tools come typed (Responses, Anthropic Messages)
    as a canonical request, with notes on what was set aside. The caller reads the messages and
    the tool choice; here the tools of ``client_tool_types`` become definitions, the hosted ones
    (``hosted_kind`` names them in the note) are kept in ``params.hosted_tools``, and every key
    besides ``request_keys`` and the transport keys is a param."""
    tools, hosted = split_tools(payload.get("tools"), client_tool_types)
    params = {k: v for k, v in payload.items() if k not in request_keys + TRANSPORT_KEYS}
    notes: list[str] = []
    if hosted:
        params["hosted_tools"] = hosted
        notes.append(f"hosted ({hosted_kind}) tools kept in params.hosted_tools")
    model = payload.get("model")
    request = LLMRequest(
        model=model if isinstance(model, str) else None,
        messages=messages,
        tools=tools,
        tool_choice=tool_choice,
        params=params,
    )
    return request, notes


def finish_reason_name(reason: Any) -> str | None:
    """A finish reason under its OpenAI name (``tool-calls``, ``STOP``, ``end_turn`` …)."""
    if reason is None:
        return None
    if isinstance(reason, list) and reason and isinstance(reason[0], str):
        reason = reason[0]
    if not isinstance(reason, str):
        raise RecordError("mistyped_field", "finish_reason must be a string")
    return FINISH_REASONS.get(reason, reason)


def decoded(value: Any) -> Any:
    """A value that may be JSON text, decoded; text that is not JSON stays text."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def tool_list(value: Any, what: str) -> list[Any] | None:
    """A recorded list of tools, decoded when it is JSON text; None when not recorded, and a
    ``malformed_tool_definition`` :class:`RecordError` naming ``what`` when it is not a list."""
    value = decoded(value)
    if value is None:
        return None
    if not isinstance(value, list):
        raise RecordError("malformed_tool_definition", f"{what} must be a list")
    return value


def as_text(value: Any) -> str | None:
    """A tool result or other payload as the text a model receives; structures as JSON."""
    if value is None or isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


# --- input messages ----------------------------------------------------------------------------


def read_messages(value: Any, where: str) -> list[Message]:
    """A recorded conversation (a list of messages in any known shape) as canonical messages."""
    value = decoded(value)
    if isinstance(value, dict):
        for key in ("messages", "contents", "input"):
            if isinstance(value.get(key), list):
                value = value[key]
                break
    if not isinstance(value, list):
        raise RecordError("mistyped_field", f"{where} must be a list of messages")
    messages: list[Message] = []
    for raw in value:
        messages.extend(read_message(raw))
    return messages


def read_message(raw: Any) -> list[Message]:
    """One recorded message as canonical messages (a message answering several calls splits)."""
    raw = decoded(raw)
    if isinstance(raw, str):
        return [Message(role="user", content=raw)]
    if not isinstance(raw, dict):
        raise RecordError("malformed_message", "a message must be an object")
    plain = _plain_message(raw)
    if plain is not None:
        return [plain]
    raw = _unwrapped(raw)
    kind = raw.get("type")
    if "role" not in raw and kind in (*CALL_TYPES, *RESULT_TYPES, "reasoning"):
        return _item_message(raw)
    role = _role(raw)
    parts, calls, results = _content(raw.get("parts", raw.get("content")))
    calls.extend(_field_calls(raw))
    if role == "tool" and not results:
        call_id = _first_str(raw, "tool_call_id", "toolCallId", "tool_use_id", "id")
        content = _content_value(parts)
        return [Message(role="tool", content=content, tool_call_id=call_id, name=_name(raw))]
    message = Message(
        role=role,
        content=_content_value(parts),
        tool_calls=calls or None,
        name=_name(raw),
    )
    if results and not parts and not calls:
        return results
    return [*results, message]


# The shape most messages have (GenAI parts, OpenAI chat): read by _plain_message directly.
PLAIN_ROLES = frozenset({"system", "developer", "user", "assistant"})
PLAIN_KEYS = frozenset({"role", "parts", "content", "finish_reason"})


CallT = TypeVar("CallT")


def texts_and_calls(
    parts: list[Any], call: Callable[[dict[str, Any]], CallT]
) -> tuple[list[str], list[CallT]] | None:
    """The texts and the tool calls (each made by ``call``) of a message's parts, in order;
    None when a part is neither text nor a tool call, or a text part holds no string."""
    texts: list[str] = []
    calls: list[CallT] = []
    for item in parts:
        kind = item.get("type") if type(item) is dict else None
        if kind in TEXT_TYPES:
            text = item.get("text", item.get("content"))
            if not isinstance(text, str):
                return None
            texts.append(text)
        elif kind in CALL_TYPES:
            calls.append(call(item))
        else:
            return None
    return texts, calls


def _plain_message(raw: dict[str, Any]) -> Message | None:
    """A system, user or assistant message whose content (``parts`` or ``content``) is text or
    text and tool-call parts, read without the general reader's shape checks; None for any
    other message, which the general reader takes (and the same message either way)."""
    role = raw.get("role")
    if role not in PLAIN_ROLES or not PLAIN_KEYS.issuperset(raw):
        return None
    value = raw.get("parts", raw.get("content"))
    if value is None or isinstance(value, str):
        return Message(role=role, content=value)
    if type(value) is not list:
        return None
    parts = texts_and_calls(value, _call)
    if parts is None:
        return None
    texts, calls = parts
    content: str | list[ContentPart] | None = None
    if len(texts) == 1:
        content = texts[0]
    elif texts:
        content = [ContentPart(type="text", text=text) for text in texts]
    return Message(role=role, content=content, tool_calls=calls or None)


def tool_definition_message(message: Message) -> Any | None:
    """A tool definition that a handler put into the messages (LangGraph's callback does), else
    None: a tool message with no call id whose content is an OpenAI function definition."""
    if message.role != "tool" or message.tool_call_id is not None:
        return None
    value = decoded(message.content) if isinstance(message.content, str) else None
    if isinstance(value, dict) and value.get("type") == "function" and "function" in value:
        return tool_def_from_openai(value)
    return None


def _unwrapped(raw: dict[str, Any]) -> dict[str, Any]:
    """A LangChain ``lc`` constructor as the message fields it holds."""
    if raw.get("lc") == 1 and raw.get("type") == "constructor" and isinstance(raw.get("id"), list):
        kwargs = raw.get("kwargs") if isinstance(raw.get("kwargs"), dict) else {}
        role = LANGCHAIN_CLASSES.get(str(raw["id"][-1]))
        if role is None:
            raise RecordError("malformed_message", f"unknown LangChain message {raw['id'][-1]!r}")
        return {**kwargs, "role": role}
    return raw


def _role(raw: dict[str, Any]) -> str:
    """The canonical role of a message; a tool result named after its tool is a tool message."""
    role = raw.get("role", raw.get("type"))
    if isinstance(role, str):
        role = ROLE_NAMES.get(role, role)
    if role in ROLES:
        return role
    if isinstance(role, str) and (
        _first_str(raw, "tool_call_id", "toolCallId") or "additional_kwargs" in raw
    ):
        return "tool"  # LangChain records a tool result under the tool's name
    raise RecordError(f"unknown_role:{role}", f"a message has the role {role!r}")


def _name(raw: dict[str, Any]) -> str | None:
    """The participant or tool name of a message, if recorded."""
    name = raw.get("name")
    if isinstance(name, str) and name:
        return name
    role = raw.get("role")
    if isinstance(role, str) and role not in ROLES and role not in ROLE_NAMES:
        return role
    return None


def _item_message(item: dict[str, Any]) -> list[Message]:
    """A Responses item or a bare call/result part in a message list."""
    kind = item["type"]
    if kind in CALL_TYPES:
        return [Message(role="assistant", tool_calls=[_call(item)])]
    if kind in RESULT_TYPES:
        return [_result(item)]
    return [Message(role="assistant", content=[_reasoning(item)])]


def _field_calls(raw: dict[str, Any]) -> list[ToolCall]:
    """Tool calls held outside the content: ``tool_calls``, ``additional_kwargs``,
    ``function_call``, ``toolCalls``."""
    found = raw.get("tool_calls") or raw.get("toolCalls")
    extra = raw.get("additional_kwargs")
    if not found and isinstance(extra, dict):
        found = extra.get("tool_calls")
        if not found and isinstance(extra.get("function_call"), dict):
            found = [extra["function_call"]]
    if not found and isinstance(raw.get("function_call"), dict):
        found = [raw["function_call"]]
    found = decoded(found)
    if not found:
        return []
    if not isinstance(found, list):
        raise RecordError("malformed_message", "tool_calls must be a list")
    return [_call(call) for call in found]


def _call(raw: Any) -> ToolCall:
    """One tool call in any known shape."""
    if not isinstance(raw, dict):
        raise RecordError("malformed_tool_call", "a tool call must be an object")
    function = raw.get("function") if isinstance(raw.get("function"), dict) else raw
    name = _first_str(function, "name", "toolName")
    if name is None:
        raise RecordError("malformed_tool_call", "a tool call without a name")
    arguments = next(
        (function[key] for key in ("arguments", "args", "input") if key in function), None
    )
    call_id = _first_str(raw, "id", "call_id", "toolCallId", "tool_call_id")
    if raw.get("type") == "function_call" and isinstance(raw.get("call_id"), str):
        call_id = raw["call_id"]  # a Responses item's id names the item, call_id the call
    return ToolCall.from_raw(name, arguments, call_id)


def _result(raw: dict[str, Any]) -> Message:
    """A tool result part or item as a tool message."""
    call_id = _first_str(raw, "call_id", "toolCallId", "tool_use_id", "tool_call_id", "id")
    value = next(
        (raw[key] for key in ("response", "result", "output", "content") if key in raw), None
    )
    if isinstance(value, dict) and value.get("type") in ("json", "text") and "value" in value:
        value = value["value"]  # the AI SDK's typed tool output
    if isinstance(value, list) and all(isinstance(p, dict) and p.get("type") for p in value):
        parts, _, _ = _content(value)
        content: Any = _content_value(parts)
    else:
        content = as_text(value)
    name = _first_str(raw, "name", "toolName")
    return Message(role="tool", content=content, tool_call_id=call_id, name=name)


def _reasoning(raw: dict[str, Any]) -> ContentPart:
    """A reasoning or thinking part; encrypted or redacted content is kept, marked."""
    text = _first_str(raw, "content", "text", "thinking")
    summary = raw.get("summary")
    if text is None and isinstance(summary, list):
        text = "\n".join(s["text"] for s in summary if isinstance(s, dict) and "text" in s) or None
    extra = {
        key: raw[key]
        for key in ("encrypted_content", "signature", "id")
        if isinstance(raw.get(key), str)
    }
    return ContentPart(type="reasoning", text=text, **extra)


def _dotnet_reasoning(raw: dict[str, Any]) -> ContentPart:
    """Microsoft.Extensions.AI's ``TextReasoningContent``: text, and ``protectedData``, the
    provider's encrypted reasoning."""
    content = raw.get("content") if isinstance(raw.get("content"), dict) else raw
    text = content.get("text") if isinstance(content.get("text"), str) else None
    protected = content.get("protectedData")
    extra = {"encrypted_content": protected} if isinstance(protected, str) else {}
    return ContentPart(type="reasoning", text=text or None, **extra)


def _content(value: Any) -> tuple[list[ContentPart], list[ToolCall], list[Message]]:
    """Message content in any shape: (content parts, tool calls, tool results)."""
    if value is None:
        return [], [], []
    if isinstance(value, str):
        return [ContentPart(type="text", text=value)], [], []
    if isinstance(value, dict):
        if _is_part(value):
            value = [value]
        else:
            return [ContentPart(type="text", text=as_text(value))], [], []
    if not isinstance(value, list):
        return [ContentPart(type="text", text=as_text(value))], [], []
    parts: list[ContentPart] = []
    calls: list[ToolCall] = []
    results: list[Message] = []
    for item in value:
        _add_part(item, parts, calls, results)
    return parts, calls, results


def _is_part(value: dict[str, Any]) -> bool:
    """True for a dict that is one content part rather than a structured text payload."""
    if isinstance(value.get("type"), str):
        return value["type"] in PART_TYPES
    return any(key in value for key in GEMINI_KEYS) or set(value) <= {"text", "thought"}


GEMINI_CALL_KEYS = ("functionCall", "function_call")
GEMINI_RESULT_KEYS = ("functionResponse", "function_response")
GEMINI_DATA_KEYS = ("inlineData", "inline_data", "fileData", "file_data")
GEMINI_KEYS = (*GEMINI_CALL_KEYS, *GEMINI_RESULT_KEYS, *GEMINI_DATA_KEYS)


def _add_part(
    item: Any, parts: list[ContentPart], calls: list[ToolCall], results: list[Message]
) -> None:
    """Sort one content item into text and other parts, tool calls and tool results."""
    if isinstance(item, str):
        parts.append(ContentPart(type="text", text=item))
        return
    if not isinstance(item, dict):
        raise RecordError("malformed_message", "content parts must be objects or text")
    kind = item.get("type")
    if kind is None:
        _add_gemini_part(item, parts, calls, results)
    elif kind in TEXT_TYPES:
        text = item.get("text", item.get("content"))
        if not isinstance(text, str):
            raise RecordError("malformed_message", f"{kind} part without text content")
        parts.append(ContentPart(type="text", text=text))
    elif kind in CALL_TYPES:
        calls.append(_call(item))
    elif kind in RESULT_TYPES:
        results.append(_result(item))
    elif kind in REASONING_TYPES:
        parts.append(_reasoning(item))
    elif isinstance(kind, str) and kind.endswith("ReasoningContent"):
        parts.append(_dotnet_reasoning(item))
    elif isinstance(kind, str):
        parts.append(ContentPart.model_validate(item))
    else:
        raise RecordError("malformed_message", "a content part's type must be a string")


def _add_gemini_part(
    item: dict[str, Any], parts: list[ContentPart], calls: list[ToolCall], results: list[Message]
) -> None:
    """One Gemini part (``text``, ``thought``, ``functionCall``, ``functionResponse``, data)."""
    call = next((item[key] for key in GEMINI_CALL_KEYS if isinstance(item.get(key), dict)), None)
    answer = next(
        (item[key] for key in GEMINI_RESULT_KEYS if isinstance(item.get(key), dict)), None
    )
    if call is not None:
        calls.append(_call(call))
    elif answer is not None:
        results.append(_result(answer))
    elif isinstance(item.get("text"), str):
        kind = "reasoning" if item.get("thought") is True else "text"
        parts.append(ContentPart(type=kind, text=item["text"]))
    elif any(key in item for key in GEMINI_DATA_KEYS):
        key = next(key for key in GEMINI_DATA_KEYS if key in item)
        parts.append(
            ContentPart(type="blob" if key.startswith("inline") else "uri", data=item[key])
        )
    else:
        raise RecordError("malformed_message", f"a content part with keys {sorted(item)}")


def _content_value(parts: list[ContentPart]) -> str | list[ContentPart] | None:
    """Message content: one text part as plain text, several parts as a list."""
    if not parts:
        return None
    if len(parts) == 1 and parts[0].type == "text":
        return parts[0].text
    return parts


def _first_str(raw: dict[str, Any], *keys: str) -> str | None:
    """The first non-empty string among the keys."""
    for key in keys:
        value = raw.get(key)
        if isinstance(value, str) and value:
            return value
    return None


# --- answers -----------------------------------------------------------------------------------


@dataclass
class Answer:
    """An answer read from a recorded output: the message and what came with it (None when the
    output did not record it)."""

    message: Message
    finish_reason: str | None = None
    usage: Usage | None = None
    model: str | None = None
    response_id: str | None = None
    notes: list[str] = field(default_factory=list)


def read_answer(value: Any, choices_are_alternatives: bool = False) -> Answer | None:
    """A recorded output in any known shape as one answer; None when nothing was recorded.

    Several output messages are one answer (a second message with a second tool call belongs
    to it), unless they are alternatives (``n`` > 1): then the first is the answer.
    """
    value = decoded(value)
    if value is None or value == "" or value == [] or value == {}:
        return None
    if isinstance(value, str):
        return Answer(Message(role="assistant", content=value))
    if isinstance(value, dict):
        return _answer_object(value)
    if isinstance(value, list):
        return _answer_list(value, choices_are_alternatives)
    raise RecordError("mistyped_field", f"an output of type {type(value).__name__}")


def _answer_object(value: dict[str, Any]) -> Answer:
    """An output object: a completion, a Gemini response, a Responses object, a message."""
    if isinstance(value.get("choices"), list) and value["choices"]:
        return _completion(value)
    if isinstance(value.get("candidates"), list) and value["candidates"]:
        candidate = value["candidates"][0]
        answer = _answer_object(candidate if isinstance(candidate, dict) else {})
        answer.usage = answer.usage or gemini_usage(value)
        answer.model = _first_str(value, "modelVersion", "model_version")
        answer.response_id = _first_str(value, "responseId", "response_id")
        return answer
    if isinstance(value.get("output"), list) and value.get("object") == "response":
        return _answer_list(value["output"], False)
    if isinstance(value.get("generations"), list):
        return _generation(value["generations"])
    if isinstance(value.get("content"), dict) and "parts" in value["content"]:
        answer = _answer_message(value["content"])
        answer.finish_reason = finish_reason_name(
            value.get("finish_reason", value.get("finishReason"))
        )
        answer.usage = gemini_usage(value)
        return answer
    if isinstance(value.get("message"), dict):
        answer = _answer_message(value["message"])
        answer.finish_reason = finish_reason_name(value.get("finish_reason"))
        return answer
    if "toolCalls" in value or ("text" in value and "role" not in value):
        return _ai_sdk_result(value)
    answer = _answer_message({"role": "assistant", **value} if "role" not in value else value)
    answer.finish_reason = finish_reason_name(value.get("finish_reason", value.get("stop_reason")))
    return answer


def _answer_list(value: list[Any], alternatives: bool) -> Answer:
    """A list output: output messages, Responses items, AI SDK tool calls or content parts."""
    if all(isinstance(item, dict) and "toolCallId" in item for item in value):
        calls = [_call(item) for item in value]
        return Answer(Message(role="assistant", tool_calls=calls), "tool_calls")
    bare = all(isinstance(item, dict) and item.get("type") in PART_TYPES for item in value)
    if bare and not any("role" in item for item in value):
        return _answer_message({"role": "assistant", "content": value})
    answers = [_answer_item(item) for item in value]
    answers = [answer for answer in answers if answer is not None]
    if not answers:
        raise RecordError("empty_answer", "the output list holds no assistant message")
    if alternatives and len(answers) > 1:
        first = answers[0]
        first.notes.append(f"{len(answers)} choices recorded; the first is the answer")
        return first
    return _merged(answers)


def _answer_item(item: Any) -> Answer | None:
    """One item of an output list; a reasoning-only Responses item adds its part."""
    if not isinstance(item, dict):
        raise RecordError("malformed_message", "output messages must be objects")
    if item.get("type") == "message" and "role" in item:
        return _answer_message(item)
    answer = _answer_message(item if "role" in item or "type" in item else {"role": "assistant"})
    answer.finish_reason = finish_reason_name(item.get("finish_reason"))
    return answer


def _merged(answers: list[Answer]) -> Answer:
    """Several output messages as the one answer they make up together."""
    if len(answers) == 1:
        return answers[0]
    parts: list[ContentPart] = []
    calls: list[ToolCall] = []
    for answer in answers:
        content = answer.message.content
        if isinstance(content, str):
            parts.append(ContentPart(type="text", text=content))
        elif content:
            parts.extend(content)
        calls.extend(answer.message.tool_calls or [])
    reasons = [a.finish_reason for a in answers if a.finish_reason]
    message = Message(role="assistant", content=_content_value(parts), tool_calls=calls or None)
    return Answer(
        message,
        "tool_calls" if calls and "tool_calls" in reasons else (reasons[-1] if reasons else None),
        notes=[f"{len(answers)} output messages read as one answer"],
    )


def _answer_message(raw: dict[str, Any]) -> Answer:
    """An assistant message in any shape as an answer."""
    messages = read_message(raw)
    message = messages[-1]
    if message.role != "assistant":
        raise RecordError(
            "malformed_message", f"the output message has role {message.role!r}, not assistant"
        )
    return Answer(message, finish_reason_name(raw.get("finish_reason")))


def _completion(body: dict[str, Any]) -> Answer:
    """A chat-completions response body; several choices keep the first as the answer."""
    choices = [c for c in body["choices"] if isinstance(c, dict)]
    first = choices[0]
    if isinstance(first.get("message"), dict):
        answer = _answer_message(first["message"])
    elif isinstance(first.get("text"), str):
        answer = Answer(Message(role="assistant", content=first["text"]))
    else:
        raise RecordError("malformed_response", "a choice without a message")
    answer.finish_reason = finish_reason_name(first.get("finish_reason"))
    answer.usage = openai_usage(body.get("usage"))
    answer.model = _first_str(body, "model")
    answer.response_id = _first_str(body, "id")
    if len(choices) > 1:
        answer.notes.append(f"{len(choices)} choices recorded; the first is the answer")
    return answer


def _generation(generations: list[Any]) -> Answer:
    """A LangChain ``LLMResult``: the first generation of the first prompt."""
    first = generations[0][0] if generations and isinstance(generations[0], list) else None
    if not isinstance(first, dict):
        raise RecordError("malformed_response", "generations holds no generation")
    if isinstance(first.get("message"), dict):
        return _answer_message(_unwrapped(first["message"]))
    return Answer(Message(role="assistant", content=as_text(first.get("text"))))


def _ai_sdk_result(value: dict[str, Any]) -> Answer:
    """The AI SDK's ``{text, toolCalls, finishReason}`` result object."""
    calls = [_call(call) for call in decoded(value.get("toolCalls")) or []]
    text = value.get("text")
    message = Message(
        role="assistant",
        content=text if isinstance(text, str) and text else None,
        tool_calls=calls or None,
    )
    return Answer(message, finish_reason_name(value.get("finishReason")))


def openai_usage(raw: Any) -> Usage | None:
    """OpenAI usage (chat completions or Responses), with cached and reasoning tokens."""
    found = usage_from_openai(raw)
    return None if found is None or found == Usage() else found


def gemini_usage(value: dict[str, Any]) -> Usage | None:
    """Gemini ``usageMetadata`` (either spelling)."""
    raw = value.get("usageMetadata", value.get("usage_metadata"))
    if not isinstance(raw, dict):
        return None
    found = Usage(
        input_tokens=first_count(raw, "promptTokenCount", "prompt_token_count"),
        output_tokens=first_count(raw, "candidatesTokenCount", "candidates_token_count"),
        total_tokens=first_count(raw, "totalTokenCount", "total_token_count"),
        cached_input_tokens=first_count(
            raw, "cachedContentTokenCount", "cached_content_token_count"
        ),
        reasoning_tokens=first_count(raw, "thoughtsTokenCount", "thoughts_token_count"),
    )
    return None if found == Usage() else found
