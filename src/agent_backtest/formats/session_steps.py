"""Reader of session/step exports: a JSON document of sessions, turns and typed steps.

The document is a list of sessions or ``{"sessions": [...]}``. A session is ``{session_id,
agent?: {name, version}, turns: [{topic?, messages: [{message_type: Input|Output, text}],
steps: [...]}]}``. A step has ``step_id``, ``name`` (the node), ``step_type``, optional
``start_time``/``end_time`` (ISO 8601) and ``status``, and an ``input`` and ``output`` that are
JSON strings (or objects):

- ``LLM_STEP``: input ``{"gen_ai.input.messages", "gen_ai.request.tools", "gen_ai.request.model"}``,
  output ``{"gen_ai.output.messages": [{role, content, tool_invocations}]}``; messages name tool
  calls ``tool_invocations`` (OpenAI ``tool_calls`` shape) → an ``llm`` step.
- ``ACTION_STEP``: input ``{"actionName": "namespace.tool", "actionInput": {...}}``, output the
  tool's result → a ``tool`` step.
- any other type → an ``other`` step that keeps its input and output as attributes.

The agent's ``version`` is recorded once for the session, so it is every step's agent version.

``tests/fixtures/session_steps/example.json`` is a small example of the format.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agent_backtest import trace
from agent_backtest.errors import InputError, RecordError
from agent_backtest.formats.base import ReadOptions, SkipLog, validation_errors_as
from agent_backtest.formats.isotime import parse_timestamp
from agent_backtest.formats.jsonio import json_text_value, load_json
from agent_backtest.trace.models import StepStatus
from agent_backtest.trace.openai_wire import message_from_openai, tools_from_openai

FORMAT = "session_steps"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
REQUEST_PREFIX = "gen_ai.request."
OK_STATUSES = ("ok", "success", "succeeded", "completed", "complete", "done")
ERROR_STATUSES = ("error", "failed", "failure", "timeout", "cancelled", "canceled")


def sniff(head: str, path: Path) -> bool:
    """True for a JSON document with typed steps (``step_type`` LLM_STEP / ACTION_STEP)."""
    start = head.lstrip()[:1]
    return (
        start in ("[", "{")
        and '"step_type"' in head
        and ('"LLM_STEP"' in head or '"ACTION_STEP"' in head)
    )


def read(path: Path, options: ReadOptions, skips: SkipLog) -> Iterator[trace.Session]:
    """Yield one session per item of the document, logging unusable steps and sessions."""
    sessions, base = _session_list(load_json(path), path)
    for index, raw in enumerate(sessions):
        location = f"{base}[{index}]"
        try:
            yield read_session(raw, path, location, skips)
        except RecordError as exc:
            skips.record_error(exc, location)


def read_session(raw: Any, path: Path, location: str, skips: SkipLog) -> trace.Session:
    """One session; a step that cannot be used is skipped, the rest of the session kept."""
    if not isinstance(raw, dict):
        raise RecordError("malformed_session", "a session must be an object")
    session_id = raw.get("session_id")
    if not isinstance(session_id, str | int) or isinstance(session_id, bool) or session_id == "":
        raise RecordError("malformed_session", "session without a session_id")
    turns = raw.get("turns", [])
    if not isinstance(turns, list):
        raise RecordError("malformed_session", "turns must be a list")
    session = trace.Session(
        id=str(session_id),
        source=trace.SourceRef(file=str(path), format=FORMAT, location=location),
        agent=_agent(raw.get("agent")),
        turns=[
            read_turn(turn, index, f"{location}.turns[{index}]", skips)
            for index, turn in enumerate(turns)
        ],
    )
    if session.agent is not None:
        for step in session.steps():
            step.agent_version = session.agent.version
    return session


def read_turn(raw: Any, index: int, location: str, skips: SkipLog) -> trace.Turn:
    """One turn: the user's input, the agent's output, the topic, and the usable steps."""
    if not isinstance(raw, dict):
        raise RecordError("malformed_turn", f"{location} is not an object")
    steps = raw.get("steps", [])
    if not isinstance(steps, list):
        raise RecordError("malformed_turn", f"{location}.steps is not a list")
    turn = trace.Turn(
        index=index,
        user_input=_turn_text(raw, "Input"),
        agent_output=_turn_text(raw, "Output"),
        topic=_optional_str(raw.get("topic")),
    )
    for number, step in enumerate(steps):
        step_location = f"{location}.steps[{number}]"
        try:
            turn.steps.append(read_step(step, f"turn{index}-step{number}"))
        except RecordError as exc:
            skips.record_error(exc, step_location)
    return turn


@validation_errors_as("malformed_step")
def read_step(raw: Any, fallback_id: str) -> trace.Step:
    """One step by its type: LLM_STEP → llm, ACTION_STEP → tool, others → other."""
    if not isinstance(raw, dict):
        raise RecordError("malformed_step", "a step must be an object")
    status, error = _status(raw)
    step = trace.Step(
        id=str(raw.get("step_id") or fallback_id),
        kind="other",
        name=_optional_str(raw.get("name")),
        started_at=parse_timestamp(raw.get("start_time"), "start_time"),
        ended_at=parse_timestamp(raw.get("end_time"), "end_time"),
        status=status,
        error=error,
        attributes={"step_type": raw.get("step_type")},
    )
    if raw.get("status") is not None:
        step.attributes["status"] = raw["status"]
    if raw.get("step_type") == "LLM_STEP":
        step.kind, step.llm = "llm", llm_call(raw)
    elif raw.get("step_type") == "ACTION_STEP":
        step.kind, step.tool = "tool", tool_execution(raw, error)
        step.attributes["node"] = step.name
        step.name = step.tool.name
    else:
        step.attributes.update({key: raw[key] for key in ("input", "output") if key in raw})
    return step


def llm_call(raw: dict[str, Any]) -> trace.LLMCall:
    """An LLM_STEP's request (messages, tools, model, parameters) and answer."""
    payload = _json_object(raw.get("input"), "malformed_step_input", "input")
    messages = payload.get(INPUT_MESSAGES)
    if not isinstance(messages, list) or not messages:
        raise RecordError("malformed_step_input", f"input has no {INPUT_MESSAGES} list")
    params = {
        key.removeprefix(REQUEST_PREFIX): value
        for key, value in payload.items()
        if key.startswith(REQUEST_PREFIX)
        and key not in (REQUEST_PREFIX + "model", REQUEST_PREFIX + "tools")
    }
    model = payload.get(REQUEST_PREFIX + "model")
    request = trace.LLMRequest(
        model=model if isinstance(model, str) else None,
        messages=[_message(message) for message in messages],
        tools=tools_from_openai(payload.get(REQUEST_PREFIX + "tools")),
        params=params,
    )
    return trace.LLMCall(request=request, response=_response(raw.get("output")))


def tool_execution(raw: dict[str, Any], error: str | None) -> trace.ToolExecution:
    """An ACTION_STEP's tool (the action name after its namespace), arguments and result."""
    payload = _json_object(raw.get("input"), "malformed_step_input", "input")
    action = payload.get("actionName")
    if not isinstance(action, str) or not action:
        raise RecordError("malformed_step_input", "input has no actionName")
    return trace.ToolExecution.from_raw(
        action.rsplit(".", 1)[-1],
        payload.get("actionInput"),
        result=json_text_value(raw.get("output")),
        error=error,
    )


def _response(raw: Any) -> trace.LLMResponse:
    """An LLM_STEP's output as the answer; a missing answer is ``no_response``."""
    if raw is None or raw == "":
        raise RecordError("no_response", "LLM step has no output")
    payload = _json_object(raw, "malformed_step_output", "output")
    messages = payload.get(OUTPUT_MESSAGES)
    if not isinstance(messages, list) or not messages:
        raise RecordError("no_response", f"output has no {OUTPUT_MESSAGES}")
    first = messages[0]
    message = _message(first)
    if message.role != "assistant":
        raise RecordError("malformed_step_output", f"output message role is {message.role!r}")
    finish = first.get("finish_reason") if isinstance(first, dict) else None
    reasons = payload.get("gen_ai.response.finish_reasons")
    if finish is None and isinstance(reasons, list) and reasons:
        finish = reasons[0]
    model = payload.get("gen_ai.response.model")
    return trace.LLMResponse(
        message=message,
        finish_reason=_optional_str(finish),
        usage=_usage(payload),
        model=_optional_str(model),
    )


def _message(raw: Any) -> trace.Message:
    """A message in this format: OpenAI chat, with tool calls named ``tool_invocations``."""
    if not isinstance(raw, dict):
        raise RecordError("malformed_message", "a message must be an object")
    chat = {key: value for key, value in raw.items() if key != "tool_invocations"}
    if raw.get("tool_invocations"):
        chat["tool_calls"] = raw["tool_invocations"]
    chat.pop("finish_reason", None)
    return message_from_openai(chat)


def _usage(payload: dict[str, Any]) -> trace.Usage | None:
    """Token counts from ``gen_ai.usage.*`` keys of the output, if any."""
    counts = {
        name: payload.get(f"gen_ai.usage.{name}") for name in ("input_tokens", "output_tokens")
    }
    counts = {
        name: value if isinstance(value, int) and not isinstance(value, bool) else None
        for name, value in counts.items()
    }
    if all(value is None for value in counts.values()):
        return None
    return trace.Usage(**counts)


def _json_object(raw: Any, reason: str, what: str) -> dict[str, Any]:
    """A step field that holds a JSON object, either encoded as a string or as is."""
    if isinstance(raw, str):
        try:
            raw = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise RecordError(reason, f"{what} is not valid JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise RecordError(reason, f"{what} must be a JSON object")
    return raw


def _status(raw: dict[str, Any]) -> tuple[StepStatus | None, str | None]:
    """The step status as ok/error (None when unknown) and the error text."""
    status = raw.get("status")
    if not isinstance(status, str):
        return None, None
    if status.lower() in ERROR_STATUSES:
        error = raw.get("error") if isinstance(raw.get("error"), str) else f"status {status}"
        return "error", error
    # A status this reader does not know stays unrecorded (and is kept as an attribute).
    return ("ok" if status.lower() in OK_STATUSES else None), None


def _turn_text(turn: dict[str, Any], message_type: str) -> str | None:
    """The text of a turn's messages of one type (Input or Output)."""
    messages = turn.get("messages")
    if not isinstance(messages, list):
        return None
    texts = [
        m["text"]
        for m in messages
        if isinstance(m, dict)
        and m.get("message_type") == message_type
        and isinstance(m.get("text"), str)
    ]
    return "\n".join(texts) if texts else None


def _agent(raw: Any) -> trace.AgentInfo | None:
    """The session's agent name and version, if recorded."""
    if not isinstance(raw, dict):
        return None
    version = raw.get("version")
    return trace.AgentInfo(
        name=_optional_str(raw.get("name")), version=str(version) if version is not None else None
    )


def _session_list(document: Any, path: Path) -> tuple[list[Any], str]:
    """The sessions of the document and the JSON path they sit at."""
    if isinstance(document, list):
        return document, "$"
    if isinstance(document, dict) and isinstance(document.get("sessions"), list):
        return document["sessions"], "$.sessions"
    raise InputError(path, "$", 'expected a list of sessions or {"sessions": [...]}')


def _optional_str(value: Any) -> str | None:
    """The value if it is a string, else None."""
    return value if isinstance(value, str) else None
