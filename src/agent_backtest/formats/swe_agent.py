"""Reader of SWE-agent trajectories (``.traj``): ``{environment, trajectory, history, info}``.

A trajectory file is one agent run, read as one session. ``history`` is the conversation each
agent of the run kept (system prompt, demonstrations, the issue, its own answers, the tools'
output), and ``trajectory`` has one item per model call: the raw ``response``, the ``action``
taken, its ``observation`` and ``execution_time``. Each model call is an LLM step whose request
is the agent's history before that answer; its answer is the assistant entry of the history
(text and, with function calling, the tool calls), or the item's ``response`` when the run ended
before the answer reached the history. Each action is a tool step. Older runs parse the action
out of the answer's text, newer ones call tools; both are read.

What a trajectory does not keep: tool definitions (``--tools`` supplies them), token counts per
call (``info.model_stats`` has only totals) and times of the model calls. The model and its
sampling settings come from ``replay_config`` when the run recorded it (``--recorded-model``
otherwise). A history processor other than the default may have shortened what was sent: each
call then carries a note naming it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_backtest import trace
from agent_backtest.errors import InputError, RecordError
from agent_backtest.formats.base import ReadOptions, SkipLog, SpanReading, validation_errors_as
from agent_backtest.formats.jsonio import load_json
from agent_backtest.formats.messages import decoded
from agent_backtest.formats.run_steps import text_or_none as _text
from agent_backtest.formats.run_steps import tool_step
from agent_backtest.trace.openai_wire import content_from_openai, tool_call_from_openai

FORMAT = "swe_agent"
EXPECTS = "SWE-agent trajectories (.traj: {trajectory, history, info})"
ROLES = ("system", "user", "assistant", "tool")
# History processors that leave the text of the history as it is.
UNCHANGED_HISTORY = ("default", "cache_control")
SAMPLING = ("temperature", "top_p", "stop")
# A history whose first entry is a chat message, as SWE-agent writes it.
HISTORY_START = re.compile(r'"history":\s*\[\s*\{\s*"(role|agent|message_type|content)"')


def sniff(head: str, path: Path) -> bool:
    """True for a JSON object with SWE-agent's trajectory items or its agent history."""
    if not head.lstrip().startswith("{"):
        return False
    steps = re.search(r'"trajectory":\s*\[\s*\{\s*"(action|observation|response|thought)"', head)
    return bool(steps or HISTORY_START.search(head))


def read(path: Path, options: ReadOptions, skips: SkipLog) -> Iterator[trace.Session]:
    """Yield the run as one session."""
    run = load_json(path)
    if not isinstance(run, dict) or not isinstance(run.get("history"), list):
        raise InputError(path, "$", f"expected {EXPECTS}")
    try:
        yield run_session(run, path, skips)
    except RecordError as exc:
        skips.record_error(exc, "$")


@validation_errors_as("malformed_trajectory")
def run_session(run: dict[str, Any], path: Path, skips: SkipLog) -> trace.Session:
    """The run: one turn from the issue to the submission, a step per model call and action."""
    history = [_entry(raw, f"$.history[{i}]") for i, raw in enumerate(run["history"])]
    items = run.get("trajectory") if isinstance(run.get("trajectory"), list) else []
    config = _agent_config(run.get("replay_config"))
    info = run.get("info") if isinstance(run.get("info"), dict) else {}
    agent = _main_agent(history)
    places = [i for i, entry in enumerate(history) if entry.agent == agent]
    own = [history[i] for i in places]
    answers = [
        i for i, entry in enumerate(own) if entry.message.role == "assistant" and not entry.demo
    ]
    turn = trace.Turn(
        index=0,
        user_input=next(
            (e.message.text() for e in own if e.message.role == "user" and not e.demo), None
        ),
        agent_output=_text(info.get("submission")),
    )
    for number in range(max(len(items), len(answers))):
        item = items[number] if number < len(items) and isinstance(items[number], dict) else {}
        if number < len(items):
            where = f"$.trajectory[{number}]"
        else:  # a call the history keeps and the trajectory items do not
            where = f"$.history[{places[answers[number]]}]"
        position = answers[number] if number < len(answers) else len(own)
        step = _llm_step(
            number, own[:position], own[position] if position < len(own) else None, item, config
        )
        turn.steps.append(step)
        skips.read(SpanReading(where, step.id, agent or "agent", "llm", FORMAT, *_blocker(step)))
        if item.get("action"):
            tool = _tool_step(number, item, step)
            turn.steps.append(tool)
            skips.read(SpanReading(where, tool.id, tool.name or "action", "tool", FORMAT))
    return trace.Session(
        id=f"swe-agent-{path.stem}",
        source=trace.SourceRef(file=str(path), format=FORMAT, location="$"),
        turns=[turn],
        metadata=_metadata(info, run),
    )


class _Entry:
    """One history entry: the message as the model saw it, whose it is, and whether it was
    part of a demonstration."""

    def __init__(self, message: trace.Message, agent: str | None, demo: bool) -> None:
        self.message, self.agent, self.demo = message, agent, demo


def _entry(raw: Any, where: str) -> _Entry:
    if not isinstance(raw, dict) or raw.get("role") not in ROLES:
        raise RecordError("malformed_history", f"{where} is not a chat message")
    message = trace.Message(role=raw["role"], content=content_from_openai(raw.get("content")))
    if raw.get("tool_calls"):
        message.tool_calls = [tool_call_from_openai(call) for call in raw["tool_calls"]]
    ids = raw.get("tool_call_ids")
    if raw["role"] == "tool" and isinstance(ids, list) and ids:
        message.tool_call_id = str(ids[0])
    demo = bool(raw.get("is_demo")) or raw.get("message_type") == "demonstration"
    return _Entry(message, _text(raw.get("agent")), demo)


def _main_agent(history: list[_Entry]) -> str | None:
    """The agent whose system prompt opens the history (``main``, or ``primary`` in older runs)."""
    return next((e.agent for e in history if e.message.role == "system"), None)


class _Config:
    """The model settings of ``replay_config`` (absent in older runs)."""

    def __init__(self, model: dict[str, Any], processors: list[Any]) -> None:
        self.model = _text(model.get("name"))
        self.params = {key: model[key] for key in SAMPLING if model.get(key) not in (None, [])}
        names = [p.get("type") for p in processors if isinstance(p, dict)]
        self.processors = [str(name) for name in names if name not in UNCHANGED_HISTORY]


def _agent_config(raw: Any) -> _Config:
    """The agent's settings in ``replay_config``, an object or its JSON text."""
    raw = decoded(raw)
    agent = raw.get("agent") if isinstance(raw, dict) else None
    agent = agent if isinstance(agent, dict) else {}
    model = agent.get("model") if isinstance(agent.get("model"), dict) else {}
    processors = agent.get("history_processors")
    return _Config(model, processors if isinstance(processors, list) else [])


def _llm_step(
    number: int,
    before: list[_Entry],
    answer: _Entry | None,
    item: dict[str, Any],
    config: _Config,
) -> trace.Step:
    """Call ``number``: the history before its answer as the request."""
    request = trace.LLMRequest(
        model=config.model,
        messages=[entry.message for entry in before],
        params=dict(config.params),
    )
    call = trace.LLMCall(request=request, dialect=FORMAT)
    if answer is not None and answer.message.role == "assistant":
        call.response = trace.LLMResponse(message=answer.message)
    elif isinstance(item.get("response"), str):
        call.response = trace.LLMResponse(
            message=trace.Message(role="assistant", content=item["response"])
        )
        if any(entry.message.tool_calls for entry in before):
            call.unusable = trace.Unusable(
                reason="tool_call_not_recorded",
                detail=f"the run called tools, and the trajectory keeps only the text and the "
                f"action {item.get('action')!r} of this last call, not its tool call",
            )
    if config.processors:
        call.notes.append(
            "the run's history processors (" + ", ".join(config.processors) + ") may have "
            "shortened what was sent; the request is the history as the trajectory keeps it"
        )
    return trace.Step(id=f"call-{number}", kind="llm", name="agent", llm=call)


def _blocker(step: trace.Step) -> tuple[str, str] | tuple[()]:
    call = step.llm
    if call is not None and call.unusable is not None:
        return call.unusable.reason, call.unusable.detail
    if call is not None and call.response is None:
        return "no_response", "the trajectory records no answer for this call"
    return ()


def _tool_step(number: int, item: dict[str, Any], llm: trace.Step) -> trace.Step:
    """The action a call took: its tool call when it made one, else the command it wrote."""
    action = str(item["action"]).strip()
    answer = llm.llm.response.message if llm.llm and llm.llm.response else None
    calls = answer.tool_calls if answer and answer.tool_calls else []
    if calls:
        execution = trace.ToolExecution(
            name=calls[0].name, call_id=calls[0].id, arguments=calls[0].arguments
        )
    else:
        execution = trace.ToolExecution(name=action.split()[0], arguments={"command": action})
    execution.result = item.get("observation")
    seconds = item.get("execution_time")
    step = tool_step(f"action-{number}", execution)
    step.status = None  # a trajectory does not say whether an action failed
    if isinstance(seconds, int | float) and not isinstance(seconds, bool):
        step.attributes["execution_time"] = seconds
    return step


def _metadata(info: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    metadata = {
        "exit_status": info.get("exit_status"),
        "model_stats": info.get("model_stats"),
        "environment": run.get("environment"),
    }
    return {key: value for key, value in metadata.items() if value is not None}
