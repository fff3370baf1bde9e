"""Google's shapes: Gemini ``generateContent`` requests, Google ADK's and Vertex AI's spans.

A Gemini request is ``{model, contents, config}``: ``contents`` a string or a list of
``{role: user|model, parts}`` (parts ``text``, ``functionCall``, ``functionResponse``, data),
``config`` holding ``system_instruction``, ``tools`` (``function_declarations``, the schema under
``parameters`` or ``parametersJsonSchema``) and the sampling settings under Gemini's names
(``max_output_tokens``, ``stop_sequences``, ``candidate_count``, …), which are read under the
OpenAI names; ``response_mime_type``/``response_schema`` become a ``response_format``. Google ADK
keeps the whole request and answer in ``gcp.vertex.agent.llm_request``/``llm_response``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_backtest.errors import RecordError
from agent_backtest.formats import genai_current
from agent_backtest.formats.messages import decoded, read_answer, read_message, tool_list
from agent_backtest.trace import LLMCall, LLMRequest, LLMResponse, Message, ToolDef
from agent_backtest.trace.openai_wire import tool_def_from_openai

if TYPE_CHECKING:
    from agent_backtest.formats.span_model import Span

NAME = "google_adk"
REQUEST_KEY, RESPONSE_KEY = "gcp.vertex.agent.llm_request", "gcp.vertex.agent.llm_response"
# Gemini generation settings (both spellings) → OpenAI chat-completions parameters.
SETTINGS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "topP": "top_p",
    "top_k": "top_k",
    "topK": "top_k",
    "max_output_tokens": "max_tokens",
    "maxOutputTokens": "max_tokens",
    "stop_sequences": "stop",
    "stopSequences": "stop",
    "candidate_count": "n",
    "candidateCount": "n",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "presencePenalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "frequencyPenalty": "frequency_penalty",
}


def content_keys(attributes: dict[str, Any]) -> set[str]:
    """The attribute keys this dialect turns into the call (not kept twice in the step)."""
    return {key for key in (REQUEST_KEY, RESPONSE_KEY) if key in attributes}


def llm_call(span: Span) -> LLMCall | None:
    """The call a Google ADK span records, or None for any other span."""
    attributes = span.attributes
    if REQUEST_KEY not in attributes:
        return None
    call = LLMCall(
        request=request_from_gemini(decoded(attributes[REQUEST_KEY])),
        provider=genai_current.provider(attributes),
    )
    call.request.model = call.request.model or genai_current.optional_str(
        attributes.get("gen_ai.request.model"), "gen_ai.request.model"
    )
    answer = read_answer(attributes.get(RESPONSE_KEY))
    if answer is not None:
        call.response = LLMResponse(
            message=answer.message,
            finish_reason=answer.finish_reason,
            usage=genai_current.usage(attributes) or answer.usage,
            model=answer.model,
            id=answer.response_id,
        )
    return call


def is_request(value: Any) -> bool:
    """True for a Gemini request body (it has ``contents``)."""
    return isinstance(value, dict) and "contents" in value


def request_from_gemini(body: Any) -> LLMRequest:
    """A Gemini ``generateContent`` request as a canonical request."""
    if not is_request(body):
        raise RecordError("malformed_request", "a Gemini request without contents")
    config = decoded(body.get("config") or body.get("generation_config") or {})
    if not isinstance(config, dict):
        raise RecordError("mistyped_field", "a Gemini request's config must be an object")
    messages: list[Message] = []
    instruction = config.get("system_instruction", config.get("systemInstruction"))
    if instruction is not None:
        messages.extend(_system(instruction))
    contents = body["contents"]
    if isinstance(contents, str):
        messages.append(Message(role="user", content=contents))
    elif isinstance(contents, list):
        for content in contents:
            messages.extend(read_message(content))
    else:
        raise RecordError("mistyped_field", "a Gemini request's contents must be text or a list")
    model = body.get("model")
    return LLMRequest(
        model=model if isinstance(model, str) else None,
        messages=messages,
        tools=tools_from_gemini(config.get("tools")),
        params=_params(config),
    )


def tools_from_gemini(value: Any) -> list[ToolDef] | None:
    """Gemini tools (``function_declarations`` lists) as tool definitions; None when absent."""
    listed = tool_list(value, "Gemini tools")
    if listed is None:
        return None
    tools: list[ToolDef] = []
    for tool in listed:
        declarations = None
        if isinstance(tool, dict):
            declarations = tool.get("function_declarations", tool.get("functionDeclarations"))
        if isinstance(declarations, list):
            tools.extend(tool_def_from_openai(declaration) for declaration in declarations)
        else:
            tools.append(tool_def_from_openai(tool))
    return tools


def _system(instruction: Any) -> list[Message]:
    """A system instruction (text, a content, or parts) as a system message."""
    if isinstance(instruction, str):
        return [Message(role="system", content=instruction)]
    if isinstance(instruction, dict) and "parts" in instruction:
        instruction = {**instruction, "role": "system"}
    elif isinstance(instruction, list):
        instruction = {"role": "system", "parts": instruction}
    return read_message(instruction)


def _params(config: dict[str, Any]) -> dict[str, Any]:
    """The generation settings of a config under their OpenAI names."""
    params = {SETTINGS[key]: value for key, value in config.items() if key in SETTINGS}
    mime = config.get("response_mime_type", config.get("responseMimeType"))
    schema = config.get("response_schema", config.get("response_json_schema"))
    if mime == "application/json":
        params["response_format"] = (
            {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
            if isinstance(schema, dict)
            else {"type": "json_object"}
        )
    return params
