"""OpenLLMetry (Traceloop) indexed attributes, old and new, and LiteLLM's OTel callback.

Before the GenAI conventions settled, OpenLLMetry flattened the conversation into indexed
attributes: ``gen_ai.prompt.<i>.{role,content,tool_call_id}`` with the assistant's calls under
``gen_ai.prompt.<i>.tool_calls.<j>.{id,name,arguments}``, the answer under
``gen_ai.completion.<i>.{role,content,finish_reason,tool_calls.<j>.*}`` (or the older
``function_call.{name,arguments}``), the tools offered under
``llm.request.functions.<i>.{name,description,parameters}`` and the token counts under
``llm.usage.*``. Koog and LiteLLM write the same names; Koog records an assistant's tool calls as
a message whose content is the JSON list of calls, which is read as the calls it holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_backtest.errors import RecordError
from agent_backtest.formats import genai_current
from agent_backtest.formats.messages import decoded, read_answer, read_message
from agent_backtest.formats.openinference import indexed
from agent_backtest.trace import LLMCall, Message, ToolCall, ToolDef, Usage
from agent_backtest.trace.openai_wire import tool_def_from_openai

if TYPE_CHECKING:
    from agent_backtest.formats.span_model import Span

NAME = "openllmetry"
PREFIXES = ("gen_ai.prompt.", "gen_ai.completion.", "llm.request.functions.", "llm.usage.")
CONVERSATION_PREFIXES = PREFIXES[:2]
CONTENT_PREFIXES = PREFIXES[:3]


def content_keys(attributes: dict[str, Any]) -> set[str]:
    """The attribute keys this dialect turns into the call (not kept twice in the step)."""
    return {key for key in attributes if key.startswith(CONTENT_PREFIXES)}


def claims(attributes: dict[str, Any]) -> bool:
    """True when the span records its conversation as indexed prompt/completion attributes."""
    return any(key.startswith(CONVERSATION_PREFIXES) for key in attributes)


def llm_call(span: Span) -> LLMCall | None:
    """The call a span records in indexed attributes, or None when it records none."""
    attributes = span.attributes
    if not claims(attributes):
        return None
    call = genai_current.metadata_only_call(attributes)
    call.request.messages = [
        message for raw in indexed(attributes, "gen_ai.prompt") for message in _message(raw)
    ]
    functions = indexed(attributes, "llm.request.functions")
    if functions and call.request.tools is None:
        call.request.tools = [_function(raw) for raw in functions]
    completions = indexed(attributes, "gen_ai.completion")
    if completions:
        answers = [_completion(raw) for raw in completions]
        alternatives = (call.request.params.get("n") or 1) > 1
        answer = read_answer(answers, choices_are_alternatives=alternatives)
        if answer is not None:
            response = genai_current.response(attributes, answer.message, answer.finish_reason)
            response.usage = response.usage or usage(attributes)
            call.response = response
            call.notes.extend(answer.notes)
    return call


def usage(attributes: dict[str, Any]) -> Usage | None:
    """``llm.usage.*`` token counts (the names before ``gen_ai.usage.*``)."""
    to_int = genai_current.to_int
    found = Usage(
        input_tokens=to_int(attributes.get("llm.usage.prompt_tokens"), "llm.usage.prompt_tokens"),
        output_tokens=to_int(
            attributes.get("llm.usage.completion_tokens"), "llm.usage.completion_tokens"
        ),
        total_tokens=to_int(attributes.get("llm.usage.total_tokens"), "llm.usage.total_tokens"),
        cached_input_tokens=to_int(
            attributes.get("gen_ai.usage.cache_read_input_tokens"),
            "gen_ai.usage.cache_read_input_tokens",
        ),
    )
    return None if found == Usage() else found


def _message(raw: dict[str, Any]) -> list[Message]:
    """One indexed prompt message."""
    calls = _calls(raw)
    content = raw.get("content")
    role = raw.get("role")
    embedded = _embedded_calls(content)
    if embedded:  # Koog: the assistant's calls as a message's JSON content
        return [Message(role="assistant", tool_calls=embedded)]
    message: dict[str, Any] = {"role": role, "content": content}
    if calls:
        message["tool_calls"] = calls
    for key in ("tool_call_id", "name"):
        if isinstance(raw.get(key), str):
            message[key] = raw[key]
    return read_message(message)


def _completion(raw: dict[str, Any]) -> dict[str, Any]:
    """One indexed completion as an output message."""
    content = raw.get("content")
    calls = _calls(raw)
    embedded = _embedded_calls(content)
    if embedded and not calls:
        calls = [
            {"id": c.id, "function": {"name": c.name, "arguments": c.arguments}} for c in embedded
        ]
        content = None
    message: dict[str, Any] = {"role": raw.get("role") or "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    if raw.get("finish_reason") is not None:
        message["finish_reason"] = raw["finish_reason"]
    return message


def _calls(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """``tool_calls.<j>.*`` (or the single ``function_call.*``) as OpenAI tool calls."""
    calls = [
        {
            "id": call.get("id"),
            "function": {"name": call.get("name"), "arguments": call.get("arguments")},
        }
        for call in indexed(raw, "tool_calls")
    ]
    if not calls and raw.get("function_call.name") is not None:
        calls = [
            {
                "function": {
                    "name": raw["function_call.name"],
                    "arguments": raw.get("function_call.arguments"),
                }
            }
        ]
    for call in calls:
        if call.get("id") is None:
            call.pop("id", None)
    return calls


def _embedded_calls(content: Any) -> list[ToolCall]:
    """Tool calls a message's content holds as a JSON list of OpenAI calls, else []."""
    value = decoded(content) if isinstance(content, str) else None
    if not isinstance(value, list) or not value:
        return []
    if not all(isinstance(item, dict) and isinstance(item.get("function"), dict) for item in value):
        return []
    calls = []
    for item in value:
        function = item["function"]
        if not isinstance(function.get("name"), str):
            return []
        calls.append(ToolCall.from_raw(function["name"], function.get("arguments"), item.get("id")))
    return calls


def _function(raw: dict[str, Any]) -> ToolDef:
    """One ``llm.request.functions.<i>`` as a tool definition."""
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise RecordError("malformed_tool_definition", "llm.request.functions without a name")
    return tool_def_from_openai(
        {
            "name": name,
            "description": raw.get("description"),
            "parameters": decoded(raw.get("parameters")),
        }
    )
