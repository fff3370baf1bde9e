"""The outputs grader: did the agent tell the user every value the case needs it to say?

τ-bench's rule: each gold output must appear, compared case-insensitively, in the text of some
answer the agent gave the user, with the answer's commas removed (so ``1,286`` says ``1286``).
An answer is an assistant message that calls no tool: the text beside a tool call went to no
one in τ-bench, whose agent ran the call instead of replying.
"""

from __future__ import annotations

from typing import Any

from agent_backtest.bench.graders import Component, GradingInput

__all__ = ["answers", "grade", "judge"]


def grade(input: GradingInput) -> Component:
    """1 when every gold output was said (so also when the gold names none), else 0."""
    return judge(input.gold.outputs, input.messages)


def judge(required: list[str], messages: list[dict[str, Any]]) -> Component:
    """The grade of a transcript that had to say each of ``required``."""
    said = [text.lower().replace(",", "") for text in answers(messages)]
    missing = [out for out in required if not any(out.lower() in text for text in said)]
    if not missing:
        return Component(1.0)
    return Component(0.0, f"never said {', '.join(repr(out) for out in missing)}")


def answers(messages: list[dict[str, Any]]) -> list[str]:
    """The text of each assistant message that calls no tool, in order."""
    return [
        _text(message.get("content"))
        for message in messages
        if message.get("role") == "assistant" and not message.get("tool_calls")
    ]


def _text(content: Any) -> str:
    """A message's text: the string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""
