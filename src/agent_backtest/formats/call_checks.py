"""What a call read from a span still needs before it can be replayed, and what blocks it.

Three repairs, each noted on the call: tool definitions that a handler put into the messages go
back to the tools; a tool message without a call id gets the id of the call it answers in the
assistant message before it (by tool name, else in order; a call recorded without an id, as
Gemini's are, gets one, the same on both sides); and the call is marked with the reason it
cannot be replayed when it cannot (no input, no answer, an empty answer, a tool result that
answers no recorded call), so the units layer counts the real blocker, not a side issue.
"""

from __future__ import annotations

from agent_backtest.formats.messages import tool_definition_message
from agent_backtest.trace import LLMCall, Message, ToolCall, Unusable


def finish_call(call: LLMCall) -> None:
    """Repair what can be repaired without guessing, and mark what blocks a replay."""
    _tools_out_of_messages(call)
    unmatched = pair_tool_results(call.request.messages, call.notes)
    if call.unusable is None:
        call.unusable = _blocker(call, unmatched)


def pair_tool_results(messages: list[Message], notes: list[str]) -> int:
    """Give every tool message the id of the call it answers; how many answer no recorded call."""
    pending: list[ToolCall] = []
    synthetic = 0
    unmatched = 0
    for position, message in enumerate(messages):
        if message.role == "assistant" and message.tool_calls:
            pending = list(message.tool_calls)
            continue
        if message.role != "tool":
            continue
        if message.tool_call_id is not None:
            pending = [call for call in pending if call.id != message.tool_call_id]
            continue
        call = _answered_call(message, pending)
        if call is None:
            unmatched += 1
            continue
        pending.remove(call)
        if call.id is None:
            synthetic += 1
            call.id = f"call_{synthetic}"
        message.tool_call_id = call.id
        notes.append(
            f"message {position} (tool): call id {call.id} matched from the preceding "
            f"{call.name} call"
        )
    return unmatched


def _answered_call(message: Message, pending: list[ToolCall]) -> ToolCall | None:
    """The pending call a tool message answers: the first of its tool's name, else the first."""
    if message.name is not None:
        for call in pending:
            if call.name == message.name:
                return call
    return pending[0] if pending else None


def _tools_out_of_messages(call: LLMCall) -> None:
    """LangGraph's handler lists the tools as tool messages; they are tool definitions."""
    kept, found = [], []
    for message in call.request.messages:
        tool = tool_definition_message(message)
        if tool is None:
            kept.append(message)
        else:
            found.append(tool)
    if found:
        call.request.messages = kept
        if call.request.tools is None:
            call.request.tools = found
        call.notes.append(f"{len(found)} tool definitions read from the input messages")


def _blocker(call: LLMCall, unmatched: int) -> Unusable | None:
    """The reason the call cannot be replayed, the most basic one first; None when it can."""
    if not call.request.messages:
        return Unusable(
            reason="no_input_messages",
            detail="the trace recorded no input messages for this call "
            "(content capture off, or a shape no reader knows)",
        )
    if call.response is None:
        return Unusable(reason="no_response", detail="the trace records the request but no answer")
    answer = call.response.message
    if not answer.text().strip() and not answer.tool_calls:
        return Unusable(
            reason="empty_answer", detail="the recorded answer has neither text nor a tool call"
        )
    if unmatched:
        return Unusable(
            reason="tool_result_without_call",
            detail=f"{unmatched} tool messages answer no call in the recorded input "
            "(the assistant message that called the tool is missing)",
        )
    return None
