"""Reader of τ²-bench results files: ``{timestamp, info, tasks, simulations}``.

Each simulation is one session between τ²-bench's agent, its simulated user and the domain's
tools. Every assistant message that records a model call (``usage`` or ``raw_data``) is an LLM
step whose request is the conversation as the agent saw it before that message; the opening
greeting, which τ²-bench writes without calling a model, is history only. A tool message that
answers the agent is a tool execution. The simulated user's own tool calls and their results are
the user's side of a dual-control domain and never reach the agent, so they are left out of its
history. The reward, task id, trial and termination reason are session metadata.

The file keeps the domain policy (``info.environment_info.policy``) but not the agent's system
prompt built around it, and tool definitions only when ``tool_defs`` was recorded: the policy is
the system message (a note on each call says so), and ``--tools`` supplies missing tools.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from agent_backtest import trace
from agent_backtest.errors import InputError, RecordError
from agent_backtest.formats.base import ReadOptions, SkipLog, SpanReading, validation_errors_as
from agent_backtest.formats.isotime import parse_timestamp
from agent_backtest.formats.jsonio import load_json
from agent_backtest.formats.run_steps import text_or_none as _text
from agent_backtest.formats.run_steps import tool_step
from agent_backtest.trace.openai_wire import (
    PARAM_ALIASES,
    WIRE_PARAMS,
    tools_from_openai,
    usage_from_openai,
)

FORMAT = "tau2_bench"
EXPECTS = "τ²-bench results files ({timestamp, info, tasks, simulations})"
POLICY_NOTE = (
    "τ²-bench records the domain policy, not the agent's system prompt around it: "
    "the policy is the system message"
)


def sniff(head: str, path: Path) -> bool:
    """True for a JSON object whose ``info`` describes τ²-bench's user and agent."""
    return (
        head.lstrip().startswith("{")
        and '"info"' in head
        and '"user_info"' in head
        and ('"agent_info"' in head or '"simulations"' in head)
    )


def read(path: Path, options: ReadOptions, skips: SkipLog) -> Iterator[trace.Session]:
    """Yield one session per simulation."""
    results = load_json(path)
    if not isinstance(results, dict) or not isinstance(results.get("simulations"), list):
        raise InputError(path, "$", f"expected {EXPECTS}")
    try:
        run = _Run.of(results.get("info"))
    except RecordError as exc:  # what every simulation shares: the file cannot be read
        raise InputError(path, "$.info", f"{exc.reason}: {exc.detail}") from None
    for index, simulation in enumerate(results["simulations"]):
        location = f"$.simulations[{index}]"
        try:
            yield simulation_session(simulation, run, path, location, skips)
        except RecordError as exc:
            skips.record_error(exc, location)


class _Run:
    """What the results file says about every simulation: the agent's model, its settings,
    the policy and the tools."""

    def __init__(self, info: dict[str, Any]) -> None:
        agent = info.get("agent_info") if isinstance(info.get("agent_info"), dict) else {}
        environment = info.get("environment_info")
        environment = environment if isinstance(environment, dict) else {}
        llm = agent.get("llm") if isinstance(agent.get("llm"), str) else ""
        self.provider, _, self.model = llm.rpartition("/")
        settings = agent.get("llm_args") if isinstance(agent.get("llm_args"), dict) else {}
        # Only the settings that reach the model: the rest configure the client (rate limits).
        self.params = {
            key: value
            for key, value in settings.items()
            if PARAM_ALIASES.get(key, key) in WIRE_PARAMS
        }
        self.policy = environment.get("policy")
        self.domain = environment.get("domain_name")
        self.tools = tools_from_openai(environment.get("tool_defs"))

    @classmethod
    def of(cls, info: Any) -> _Run:
        return cls(info if isinstance(info, dict) else {})


@validation_errors_as("malformed_simulation")
def simulation_session(
    simulation: Any, run: _Run, path: Path, location: str, skips: SkipLog
) -> trace.Session:
    """One simulation: a turn per simulated-user message, a step per model call and tool run."""
    if not isinstance(simulation, dict) or not isinstance(simulation.get("messages"), list):
        raise RecordError("malformed_simulation", "a simulation without a messages list")
    session = trace.Session(
        id=f"tau2-{simulation.get('id') or location}",
        source=trace.SourceRef(file=str(path), format=FORMAT, location=location),
        metadata=_metadata(simulation, run),
    )
    seen: list[trace.Message] = []
    if isinstance(run.policy, str) and run.policy:
        seen.append(trace.Message(role="system", content=run.policy))
    calls: dict[str, trace.ToolCall] = {}
    turn: trace.Turn | None = None
    for index, raw in enumerate(simulation["messages"]):
        where = f"{location}.messages[{index}]"
        if not isinstance(raw, dict):
            skips.skip("malformed_message", where, "a message must be an object")
            continue
        role = raw.get("role")
        if role == "user" and isinstance(raw.get("content"), str):
            turn = trace.Turn(index=len(session.turns), user_input=raw["content"])
            session.turns.append(turn)
            seen.append(trace.Message(role="user", content=raw["content"]))
            continue
        if role not in ("assistant", "tool") or raw.get("requestor", "assistant") != "assistant":
            continue  # the simulated user's own tool calls and results
        if turn is None:  # the agent spoke first
            turn = trace.Turn(index=0)
            session.turns.append(turn)
        message = _message(raw, where)
        if role == "assistant":
            calls.update({call.id: call for call in message.tool_calls or [] if call.id})
            if _is_model_call(raw):
                step = _llm_step(raw, message, seen, run, where)
                turn.steps.append(step)
                skips.read(SpanReading(where, step.id, "assistant", "llm", FORMAT))
            if message.text():
                turn.agent_output = message.text()
        else:
            step = _tool_step(raw, message, calls.get(message.tool_call_id or ""), where)
            turn.steps.append(step)
            skips.read(SpanReading(where, step.id, step.name or "tool", "tool", FORMAT))
        seen.append(message)
    return session


def _is_model_call(raw: dict[str, Any]) -> bool:
    return raw.get("usage") is not None or raw.get("raw_data") is not None


def _message(raw: dict[str, Any], where: str) -> trace.Message:
    """A τ²-bench message: calls are ``{id, name, arguments}``, a tool result names its call
    by ``id``."""
    content = raw.get("content")
    if content is not None and not isinstance(content, str):
        raise RecordError("malformed_message", f"{where}: content is not text")
    if raw["role"] == "tool":
        return trace.Message(role="tool", content=content, tool_call_id=_text(raw.get("id")))
    calls = raw.get("tool_calls") or []
    if not isinstance(calls, list) or not all(
        isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls
    ):
        raise RecordError("malformed_tool_call", f"{where}: a tool call without a name")
    return trace.Message(
        role="assistant",
        content=content,
        tool_calls=[
            trace.ToolCall.from_raw(c["name"], c.get("arguments"), _text(c.get("id")))
            for c in calls
        ]
        or None,
    )


def _llm_step(
    raw: dict[str, Any], answer: trace.Message, seen: list[trace.Message], run: _Run, where: str
) -> trace.Step:
    details = raw.get("raw_data") if isinstance(raw.get("raw_data"), dict) else {}
    request = trace.LLMRequest(
        model=run.model or None,
        messages=list(seen),
        tools=run.tools,
        params=dict(run.params),
    )
    response = trace.LLMResponse(
        message=answer,
        finish_reason=_finish_reason(details),
        usage=usage_from_openai(raw.get("usage")),
        model=_text(details.get("model")),
        id=_text(details.get("id")),
    )
    call = trace.LLMCall(
        request=request, response=response, provider=run.provider or None, dialect=FORMAT
    )
    if run.policy:
        call.notes.append(POLICY_NOTE)
    ended = parse_timestamp(raw.get("timestamp"), "timestamp")
    seconds = raw.get("generation_time_seconds")
    started = ended - timedelta(seconds=seconds) if ended and _number(seconds) else None
    return trace.Step(
        id=f"msg-{raw.get('turn_idx', where)}",
        kind="llm",
        name="agent",
        started_at=started,
        ended_at=ended,
        llm=call,
    )


def _tool_step(
    raw: dict[str, Any], message: trace.Message, call: trace.ToolCall | None, where: str
) -> trace.Step:
    failed = raw.get("error") is True
    execution = trace.ToolExecution(
        name=call.name if call else "unknown",
        call_id=message.tool_call_id,
        arguments=call.arguments if call else None,
        result=message.content,
        error=message.text() if failed else None,
    )
    ended = parse_timestamp(raw.get("timestamp"), "timestamp")
    return tool_step(f"msg-{raw.get('turn_idx', where)}", execution, ended_at=ended)


def _finish_reason(details: dict[str, Any]) -> str | None:
    """From the recorded choice (``raw_data`` as a choice or as a whole response)."""
    choices = details.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        details = choices[0]
    return _text(details.get("finish_reason"))


def _metadata(simulation: dict[str, Any], run: _Run) -> dict[str, Any]:
    reward = simulation.get("reward_info")
    metadata = {
        "task_id": simulation.get("task_id"),
        "trial": simulation.get("trial"),
        "seed": simulation.get("seed"),
        "reward": reward.get("reward") if isinstance(reward, dict) else None,
        "termination_reason": simulation.get("termination_reason"),
        "domain": run.domain,
        "agent_cost": simulation.get("agent_cost"),
    }
    return {key: value for key, value in metadata.items() if value is not None}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
