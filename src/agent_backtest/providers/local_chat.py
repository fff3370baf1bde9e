"""Chat with tools on a bare llama.cpp model: the prompt, the constrained decision, the answer.

The model first chooses, under a grammar, between answering in words (``message:``) and calling
one of the offered tools (``functions.NAME:``); a call's arguments are then generated under a
grammar made from the tool's JSON Schema, so they parse. Every generation has a token budget and
a deadline, so a small model that loops cannot hold the machine.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

MESSAGE = "message:"
CALL = "functions."


def render_prompt(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """ChatML text of the conversation, with the tools described in the system turn."""
    parts: list[str] = []
    system = "\n\n".join(_text(m) for m in messages if m["role"] in ("system", "developer"))
    if tools:
        system += "\n\n" + _tool_instructions(tools)
    if system.strip():
        parts.append(_turn("system", system.strip()))
    for message in messages:
        role = message["role"]
        if role in ("system", "developer"):
            continue
        if role == "assistant":
            parts.append(_turn("assistant", _assistant_text(message, bool(tools))))
        elif role == "tool":
            parts.append(
                _turn(
                    "user",
                    f"Result of {message.get('tool_call_id') or 'the call'}:\n{_text(message)}",
                )
            )
        else:
            parts.append(_turn("user", _text(message)))
    return "".join(parts) + "<|im_start|>assistant\n"


def decision_grammar(tools: list[dict[str, Any]]) -> str:
    """GBNF for the first words of the answer: a message, or a call of an offered tool."""
    names = " | ".join(json.dumps(tool["function"]["name"]) for tool in tools)
    return f'root ::= "{MESSAGE}" | "{CALL}" ({names}) ":"'


def completion_body(
    text: str, call: tuple[str, str] | None, usage: tuple[int, int], finish: str | None
) -> dict[str, Any]:
    """The answer as an OpenAI chat-completion body."""
    if call is not None:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{uuid.uuid4().hex[:12]}",
                    "type": "function",
                    "function": {"name": call[0], "arguments": call[1]},
                }
            ],
        }
        finish = "tool_calls" if finish == "stop" else finish
    else:
        message = {"role": "assistant", "content": text.strip()}
    return {
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        },
    }


class Deadline:
    """A stopping criterion: true once the clock passes the deadline, or once ``stop`` is set
    (the caller gave up on the answer)."""

    def __init__(self, seconds: float, stop: threading.Event | None = None) -> None:
        self.at = time.monotonic() + seconds
        self.stop = stop
        self.passed = False

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        self.passed = time.monotonic() > self.at
        return self.passed or (self.stop is not None and self.stop.is_set())


def _turn(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content or ""


def _assistant_text(message: dict[str, Any], with_tools: bool) -> str:
    calls = message.get("tool_calls") or []
    if calls:
        return "\n".join(
            f"{CALL}{c['function']['name']}:\n{c['function']['arguments']}" for c in calls
        )
    return f"{MESSAGE}\n{_text(message)}" if with_tools else _text(message)


def _tool_instructions(tools: list[dict[str, Any]]) -> str:
    listing = "\n".join(
        f"{CALL}{t['function']['name']}: {t['function'].get('description', '')}\n"
        f"  arguments (JSON Schema): {json.dumps(t['function'].get('parameters', {}))}"
        for t in tools
    )
    return (
        "Tools you can call:\n" + listing + "\n\nAnswer in one of two ways. To reply to the "
        f"user, start with '{MESSAGE}' and write the reply on the next line. To call a tool, "
        f"write '{CALL}<tool name>:' and then its arguments as one JSON object on the next "
        "line."
    )
