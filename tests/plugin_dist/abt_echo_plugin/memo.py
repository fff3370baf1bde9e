"""The ``memo`` trace format: JSON Lines, one agent answer a line.

    {"memo": 1, "chat": "a", "user": "weather city=Oslo", "tools": {"weather": ["city"]}, …
    … "agent": {"call": "weather", "args": {"city": "Oslo"}}}
    {"memo": 1, "chat": "b", "user": "hello", "tools": {}, "agent": {"say": "hello"}}

(the first record is one line, cut here in two).

Each chat is a session; each line a turn with one LLM step, whose request is a system prompt and
the user's message and whose answer is the agent's call or text. Tools take string arguments.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_backtest.errors import InputError
from agent_backtest.formats import ReadOptions, SkipLog
from agent_backtest.trace import (
    LLMCall,
    LLMRequest,
    LLMResponse,
    Message,
    Session,
    SourceRef,
    Step,
    ToolCall,
    ToolDef,
    Turn,
)

FORMAT = "memo"
SYSTEM = "You are the memo agent."


def sniff(head: str, path: Path) -> bool:
    """True when the first line is a memo record."""
    first = head.lstrip().split("\n", 1)[0]
    return first.startswith("{") and '"memo"' in first


def read(path: Path, options: ReadOptions, skips: SkipLog) -> Iterator[Session]:
    """Yield one session per chat, in the order chats first appear."""
    sessions: dict[str, Session] = {}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(path, f"line {number}", f"not JSON: {exc.msg}") from None
            if not isinstance(record.get("agent"), dict):
                skips.skip("no_agent_answer", f"line {number}", "the line has no agent object")
                continue
            chat = str(record["chat"])
            session = sessions.setdefault(
                chat, Session(id=chat, source=SourceRef(file=str(path), format=FORMAT))
            )
            turn = Turn(index=len(session.turns), user_input=record["user"])
            turn.steps.append(_step(record, number))
            session.turns.append(turn)
    yield from sessions.values()


def _step(record: dict[str, Any], number: int) -> Step:
    """The line's LLM step."""
    tools = [
        ToolDef(
            name=name,
            parameters={
                "type": "object",
                "properties": {argument: {"type": "string"} for argument in arguments},
                "required": list(arguments),
            },
        )
        for name, arguments in record["tools"].items()
    ]
    messages = [
        Message(role="system", content=SYSTEM),
        Message(role="user", content=record["user"]),
    ]
    agent = record["agent"]
    if "call" in agent:
        call = ToolCall(id=f"call-{number}", name=agent["call"], arguments=agent["args"])
        answer = Message(role="assistant", tool_calls=[call])
    else:
        answer = Message(role="assistant", content=agent["say"])
    request = LLMRequest(model="memo-model", messages=messages, tools=tools)
    call = LLMCall(request=request, response=LLMResponse(message=answer))
    return Step(id=f"line-{number}", kind="llm", name="memo", llm=call)
