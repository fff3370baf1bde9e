"""A played conversation as a canonical session, so ``abt show``, ``profile`` and ``units``
read simulated conversations as they read production's.

A session holds, per turn, the user's message, the agent's answer, one ``agent`` step for the
turn (its status, error and time) and one ``tool`` step per tool execution. An HTTP agent's
model calls stay inside it, so its session has no LLM step (none is made up) and ``abt units``
finds no replay unit in it, and says so. The built-in agent loop's calls are recorded: each is
an ``llm`` step holding the exact request and answer, followed by the tool steps of the calls
it asked for, so ``abt units`` finds one replay unit per model call.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from agent_backtest.simulate.layout import CONVERSATIONS
from agent_backtest.simulate.models import ConversationRecord, ModelCall, ToolActivity, TurnRecord
from agent_backtest.trace import (
    AgentInfo,
    LLMCall,
    Session,
    SourceRef,
    Step,
    ToolExecution,
    Turn,
)

SESSION_FORMAT = "abt.simulate"


def conversation_session(record: ConversationRecord, line: int) -> Session:
    """The session of one conversation (``line``: its line in conversations.jsonl)."""
    return Session(
        id=record.flow_id,
        source=SourceRef(file=CONVERSATIONS, format=SESSION_FORMAT, location=f"line {line}"),
        agent=AgentInfo(name=record.target),
        turns=[_turn(turn) for turn in record.turns],
        metadata={
            "simulate": {
                "flow_id": record.flow_id,
                "seed_id": record.seed_id,
                "family": record.family,
                "isolated": record.isolated,
                "transport_error": record.transport_error,
            }
        },
    )


def _turn(turn: TurnRecord) -> Turn:
    prefix = f"t{turn.index}"
    started = _parse(turn.started_at)
    ended = started + timedelta(milliseconds=turn.turn_ms) if started and turn.turn_ms else None
    attributes = {"ttft_ms": turn.ttft_ms} if turn.ttft_ms is not None else {}
    if turn.tools_offered is not None:
        attributes["tools_offered"] = turn.tools_offered
    if turn.input_tokens is not None or turn.output_tokens is not None:
        attributes["usage"] = {"input": turn.input_tokens, "output": turn.output_tokens}
    agent = Step(
        id=f"{prefix}.agent",
        kind="agent",
        name="agent",
        started_at=started,
        ended_at=ended,
        status="error" if turn.error else "ok",
        error=turn.error,
        attributes=attributes,
    )
    tools = [
        _tool(activity, f"{prefix}.tool{n}", agent.id)
        for n, activity in enumerate(turn.tool_calls, 1)
    ]
    return Turn(
        index=turn.index - 1,
        user_input=turn.user,
        agent_output=turn.final_text,
        steps=[agent, *_in_order(turn.model_calls, tools, prefix, agent.id)],
    )


def _in_order(calls: list[ModelCall], tools: list[Step], prefix: str, parent: str) -> list[Step]:
    """Each model call's step followed by the steps of the tool calls it asked for (the loop
    runs every call of an answer, in order, before the next model call)."""
    steps: list[Step] = []
    waiting = list(tools)
    for n, call in enumerate(calls, 1):
        steps.append(_llm(call, f"{prefix}.llm{n}", parent))
        asked = len(call.response.message.tool_calls or []) if call.response else 0
        steps.extend(waiting[:asked])
        del waiting[:asked]
    return steps + waiting


def _llm(call: ModelCall, step_id: str, parent: str) -> Step:
    started = _parse(call.started_at)
    ended = started + timedelta(milliseconds=call.ms) if started and call.ms is not None else None
    return Step(
        id=step_id,
        kind="llm",
        name="agent",
        parent_id=parent,
        started_at=started,
        ended_at=ended,
        status="error" if call.error else "ok",
        error=call.error,
        llm=LLMCall(request=call.request, response=call.response, provider=call.provider),
        attributes={"cached": True} if call.cached else {},
    )


def _tool(activity: ToolActivity, step_id: str, parent: str) -> Step:
    arguments = activity.arguments
    return Step(
        id=step_id,
        kind="tool",
        name=activity.name,
        parent_id=parent,
        status="error" if activity.error else ("ok" if activity.result is not None else None),
        error=activity.error,
        tool=ToolExecution(
            name=activity.name,
            call_id=activity.call_id,
            arguments=arguments if isinstance(arguments, dict) else None,
            arguments_raw=arguments if isinstance(arguments, str) else None,
            result=activity.result,
            error=activity.error,
        ),
        attributes={"result_length": activity.result_length}
        if activity.result_length is not None
        else {},
    )


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
