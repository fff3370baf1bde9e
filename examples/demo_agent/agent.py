"""The demo agent's loop: ask the model, run the tools it calls, ask again, until it answers.

Each step is an event for the chat stream: ``tools_offered``, ``tool_start`` (name, arguments),
``tool_result`` (name, output), ``text`` (delta), ``final`` (text), ``error`` (message) and
``usage`` (tokens). The model is any OpenAI-compatible chat-completions endpoint, or a
``local/NAME`` model run in-process by agent-backtest's local provider.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx

from .store import TOOLS, ToolError

SYSTEM = (
    "You are a personal assistant with the user's notes and calendar. Use the tools to read or "
    "change them; never say something was saved, deleted or scheduled unless a tool did it. "
    "Answer briefly."
)
MAX_STEPS = 6
TOOL_DEFINITIONS: list[dict[str, Any]] = json.loads(
    (Path(__file__).with_name("tools.json")).read_text(encoding="utf-8")
)


class Model(Protocol):
    """What the loop needs of a model: one chat completion."""

    async def complete(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The chat-completion body for ``messages`` with the tools offered."""
        ...


@dataclass
class OpenAICompatible:
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    base_url: str
    model: str
    api_key: str | None = None
    client: httpx.AsyncClient = field(default_factory=lambda: httpx.AsyncClient(timeout=120))

    async def complete(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        response = await self.client.post(
            self.base_url.rstrip("/") + "/chat/completions",
            json={"model": self.model, "messages": messages, "tools": TOOL_DEFINITIONS},
            headers=headers,
        )
        response.raise_for_status()
        return response.json()


@dataclass
class LocalModel:
    """A small model run in-process by agent-backtest (``pip install 'agent-backtest[local]'``)."""

    name: str

    def __post_init__(self) -> None:
        from agent_backtest.providers import ModelClient, ModelConfig
        from agent_backtest.providers.factory import build_provider
        from agent_backtest.providers.refs import ModelRef

        self.client = ModelClient(
            build_provider(ModelRef("local", self.name), ModelConfig(), None, 1)
        )

    async def complete(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        from agent_backtest.trace.openai_wire import message_to_wire, request_from_openai

        request = request_from_openai({"messages": messages, "tools": TOOL_DEFINITIONS})
        outcome = await self.client.generate(request, self.name, 0)
        if outcome.error is not None:
            raise RuntimeError(str(outcome.error))
        assert outcome.response is not None
        usage = outcome.response.usage
        return {
            "choices": [{"message": message_to_wire(outcome.response.message)}],
            "usage": {
                "prompt_tokens": usage.input_tokens if usage else None,
                "completion_tokens": usage.output_tokens if usage else None,
            },
        }


def model_from(reference: str, base_url: str | None, api_key: str | None) -> Model:
    """``local/NAME`` for the embedded model, else a model name at ``base_url``."""
    if reference.startswith("local/"):
        return LocalModel(reference.removeprefix("local/"))
    if not base_url:
        raise SystemExit("name the model's endpoint: --model-base-url URL (or DEMO_AGENT_BASE_URL)")
    return OpenAICompatible(base_url, reference, api_key)


def run_tool(db: sqlite3.Connection, name: str, raw_arguments: str) -> str:
    """A tool's output as the model reads it: JSON, or an error it can act on."""
    tool = TOOLS.get(name)
    if tool is None:
        return json.dumps({"error": f"there is no tool {name}"})
    try:
        arguments = json.loads(raw_arguments or "{}")
        return json.dumps(tool(db, **arguments))
    except (json.JSONDecodeError, TypeError) as exc:
        return json.dumps({"error": f"invalid arguments for {name}: {exc}"})
    except ToolError as exc:
        return json.dumps({"error": str(exc)})


async def turn(
    model: Model, db: sqlite3.Connection, history: list[dict[str, Any]], user: str
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """One user turn as (event, data) pairs; ``history`` grows by the turn's messages."""
    history.append({"role": "user", "content": user})
    yield "tools_offered", {"names": [tool["function"]["name"] for tool in TOOL_DEFINITIONS]}
    used = {"input_tokens": 0, "output_tokens": 0}
    for _ in range(MAX_STEPS):
        try:
            body = await model.complete([{"role": "system", "content": SYSTEM}, *history])
        except (httpx.HTTPError, RuntimeError) as exc:
            yield "error", {"message": f"the model could not be reached: {exc}"}
            return
        usage = body.get("usage") or {}
        used["input_tokens"] += usage.get("prompt_tokens") or 0
        used["output_tokens"] += usage.get("completion_tokens") or 0
        message = body["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        history.append(
            {
                "role": "assistant",
                "content": message.get("content"),
                **({"tool_calls": calls} if calls else {}),
            }
        )
        if not calls:
            text = message.get("content") or ""
            yield "text", {"delta": text}
            yield "final", {"text": text}
            yield "usage", used
            return
        for call in calls:
            name, raw = call["function"]["name"], call["function"].get("arguments") or "{}"
            yield "tool_start", {"name": name, "arguments": raw}
            output = run_tool(db, name, raw)
            yield "tool_result", {"name": name, "output": output}
            history.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    yield "error", {"message": f"no answer after {MAX_STEPS} model calls"}
    yield "usage", used
