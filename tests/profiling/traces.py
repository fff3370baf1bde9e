"""Hand-built sessions with known timings, for tests whose expected figures are worked by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from agent_backtest.trace import (
    AgentInfo,
    LLMCall,
    LLMRequest,
    LLMResponse,
    Message,
    Session,
    Step,
    ToolCall,
    ToolExecution,
    Turn,
    Usage,
)

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def at(ms: float | None) -> datetime | None:
    """The moment ``ms`` milliseconds after T0, or None."""
    return None if ms is None else T0 + timedelta(milliseconds=ms)


def llm(
    step_id: str,
    start: float | None,
    end: float | None,
    model: str = "m1",
    usage: tuple[int | None, int | None] | None = (10, 5),
    calls: tuple[str, ...] = (),
    status: str | None = "ok",
    error: str | None = None,
) -> Step:
    """An LLM step answered by ``model`` that asks for the tools named in ``calls``."""
    answer = Message(
        role="assistant",
        tool_calls=[ToolCall(id=f"{step_id}-{i}", name=name) for i, name in enumerate(calls)]
        or None,
    )
    counts = Usage(input_tokens=usage[0], output_tokens=usage[1]) if usage else None
    call = LLMCall(
        request=LLMRequest(model=model, messages=[]),
        response=LLMResponse(message=answer, usage=counts),
    )
    return Step(
        id=step_id,
        kind="llm",
        name="agent",
        started_at=at(start),
        ended_at=at(end),
        status=status,
        error=error,
        llm=call,
    )


def tool(
    step_id: str,
    name: str,
    start: float | None,
    end: float | None,
    arguments: Any = None,
    status: str | None = "ok",
    error: str | None = None,
    attributes: dict[str, Any] | None = None,
) -> Step:
    """A tool step."""
    return Step(
        id=step_id,
        kind="tool",
        name=name,
        started_at=at(start),
        ended_at=at(end),
        status=status,
        error=error,
        attributes=attributes or {},
        tool=ToolExecution(name=name, arguments=arguments, error=error),
    )


def session(
    session_id: str, *turns: list[Step], agent: str | None = "helper", version: str | None = "1"
) -> Session:
    """A session of the given turns."""
    return Session(
        id=session_id,
        agent=AgentInfo(name=agent, version=version) if agent else None,
        turns=[Turn(index=i, steps=steps) for i, steps in enumerate(turns)],
    )


def worked_session() -> Session:
    """The session whose figures ``test_profiler`` works out by hand (times in ms from T0)."""
    return session(
        "worked",
        [
            llm("l1", 0, 100, "m1", (100, 10), calls=("search", "lookup")),
            tool("t1", "search", 110, 300, {"q": "x"}),
            tool("t2", "lookup", 150, 200, {"id": 1}),
            llm("l2", 320, 400, "m1", (200, 20)),
            tool(
                "t3",
                "search",
                410,
                None,
                {"q": "x"},
                status="error",
                error="TimeoutError: no answer within 30 s",
            ),
            tool("t4", "search", 500, 600, {"q": "x"}, status="error", error="ValueError: bad q"),
            llm("l3", 650, 700, "m2", None),
        ],
        [
            llm("l4", 1000, 1100, "m2", (50, None), status=None),
            tool("t5", "calc", 1150, 1160, None, status=None),
        ],
    )
