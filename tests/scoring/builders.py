"""Units and answers for scoring tests: one recorded step, and a candidate's answer to it."""

from __future__ import annotations

from agent_backtest.runs import CallError, ResultRecord
from agent_backtest.trace import LLMRequest, LLMResponse, Message, ToolDef
from agent_backtest.units import Unit, make_unit_id
from agent_backtest.units.answer_key import CallKey


def step_unit(
    index: int,
    golden: Message,
    *,
    session: str = "s1",
    tools: list[ToolDef] | None = None,
    question: str | None = None,
    answer_key: list[CallKey] | None = None,
) -> Unit:
    """A unit of one user question (``q{index}`` unless given) whose golden is ``golden``."""
    request = LLMRequest(
        model="gpt-4o",
        messages=[Message(role="user", content=question or f"q{index}")],
        tools=tools,
    )
    return Unit(
        unit_id=make_unit_id(session, str(index)),
        session_id=session,
        turn_index=0,
        step_id=str(index),
        kind="action",
        request=request,
        golden=LLMResponse(message=golden),
        answer_key=answer_key,
    )


def answer_to(unit: Unit, message: Message | None, error: str | None = None) -> ResultRecord:
    """The candidate's result for ``unit``: ``message``, or an infrastructure error of ``error``."""
    return ResultRecord(
        unit_id=unit.unit_id,
        repeat=0,
        session_id=unit.session_id,
        model="openai/candidate",
        request_sha="sha256:x",
        attempts=1,
        response=LLMResponse(message=message) if message else None,
        error=CallError(kind=error, detail="boom") if error else None,
    )
