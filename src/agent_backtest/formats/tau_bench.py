"""Reader of τ-bench trajectory files: a list of ``{task_id, trial, reward, info, traj}``.

Each trajectory is one session; ``traj`` is the OpenAI chat history the agent produced. Every
assistant message is a recorded LLM step whose request is the messages before it, and every tool
message is a tool execution. The files record neither the model nor the tool definitions:
``--recorded-model`` and ``--tools`` supply them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_backtest import trace
from agent_backtest.errors import InputError, RecordError
from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.formats.jsonio import load_json
from agent_backtest.trace.openai_wire import message_from_openai

FORMAT = "tau_bench"


def sniff(head: str, path: Path) -> bool:
    """True for a JSON list whose items carry ``traj`` and ``task_id``."""
    return head.lstrip().startswith("[") and '"traj"' in head and '"task_id"' in head


def read(path: Path, options: ReadOptions, skips: SkipLog) -> Iterator[trace.Session]:
    """Yield one session per trajectory."""
    for index, item in enumerate(load_trajectories(path)):
        location = f"$[{index}]"
        try:
            yield trajectory_session(item, path, location)
        except RecordError as exc:
            skips.record_error(exc, location)


def load_trajectories(path: Path) -> list[Any]:
    """The trajectories of a τ-bench results file, unchecked: it must hold a JSON list."""
    data = load_json(path)
    if not isinstance(data, list):
        raise InputError(
            path,
            "$",
            "expected a list of τ-bench trajectories ({task_id, trial, reward, info, traj})",
        )
    return data


def trajectory_session(item: Any, path: Path, location: str) -> trace.Session:
    """One trajectory as a session: a turn per user message, a step per assistant/tool message."""
    if not isinstance(item, dict) or not isinstance(item.get("traj"), list):
        raise RecordError("malformed_trajectory", "item has no traj list")
    task_id, trial = item.get("task_id"), item.get("trial")
    messages = [_message(raw, f"{location}.traj[{i}]") for i, raw in enumerate(item["traj"])]
    session = trace.Session(
        id=f"tau-task{task_id}-trial{trial}",
        source=trace.SourceRef(file=str(path), format=FORMAT, location=location),
        metadata=_metadata(item),
    )
    turn: trace.Turn | None = None
    calls: dict[str, Any] = {}
    for index, message in enumerate(messages):
        if message.role == "user":
            turn = trace.Turn(index=len(session.turns), user_input=message.text())
            session.turns.append(turn)
        if message.role not in ("assistant", "tool"):
            continue
        if turn is None:  # the agent spoke first: a turn without user input
            turn = trace.Turn(index=0)
            session.turns.append(turn)
        if message.role == "assistant":
            turn.steps.append(_llm_step(index, messages[:index], message))
            calls.update({call.id: call for call in message.tool_calls or [] if call.id})
            if message.text():
                turn.agent_output = message.text()
        else:
            turn.steps.append(_tool_step(index, message, calls.get(message.tool_call_id)))
    return session


def _message(raw: Any, location: str) -> trace.Message:
    try:
        return message_from_openai(raw)
    except RecordError as exc:
        raise RecordError(exc.reason, f"{location}: {exc.detail}") from None


def _llm_step(index: int, history: list[trace.Message], answer: trace.Message) -> trace.Step:
    # The trajectories record neither finish reasons, usage nor times: they stay missing.
    call = trace.LLMCall(
        request=trace.LLMRequest(messages=history), response=trace.LLMResponse(message=answer)
    )
    return trace.Step(id=f"msg-{index}", kind="llm", llm=call)


def _tool_step(index: int, message: trace.Message, call: Any) -> trace.Step:
    execution = trace.ToolExecution(
        name=message.name or (call.name if call else "unknown"),
        call_id=message.tool_call_id,
        arguments=call.arguments if call else None,
        arguments_raw=call.arguments_raw if call else None,
        arguments_error=call.arguments_error if call else None,
        result=message.content,
    )
    # τ-bench's environment answers a failed tool call with "Error: <reason>".
    failed = isinstance(message.content, str) and message.content.startswith("Error:")
    if failed:
        execution.error = message.text()
    return trace.Step(
        id=f"msg-{index}",
        kind="tool",
        name=execution.name,
        tool=execution,
        status="error" if failed else "ok",
        error=execution.error,
    )


def _metadata(item: dict[str, Any]) -> dict[str, Any]:
    info = item.get("info") if isinstance(item.get("info"), dict) else {}
    task = info.get("task") if isinstance(info.get("task"), dict) else {}
    metadata = {
        "task_id": item.get("task_id"),
        "trial": item.get("trial"),
        "reward": item.get("reward"),
    }
    if isinstance(task.get("instruction"), str):
        metadata["instruction"] = task["instruction"]
    return metadata
