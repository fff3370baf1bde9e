"""A played conversation as a canonical session, so ``abt show``, ``profile`` and ``units``
read simulated conversations as they read production's.

What an HTTP agent shows of itself is what it answered and which tools it ran: its model's
own requests stay inside it. So a session holds, per turn, the user's message, the agent's
answer, one ``agent`` step for the turn (its status, error and time) and one ``tool`` step per
tool execution, and no LLM step: none is made up. ``abt units`` therefore finds no replay unit
in a simulated conversation of an HTTP agent, and says so.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from agent_backtest.simulate.models import ConversationRecord, ToolActivity, TurnRecord
from agent_backtest.trace import AgentInfo, Session, SourceRef, Step, ToolExecution, Turn

SESSION_FORMAT = "abt.simulate"
CONVERSATIONS = "conversations.jsonl"


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
        steps=[agent, *tools],
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
