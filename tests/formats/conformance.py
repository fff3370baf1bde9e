"""The fields of a unit that the conformance corpus checks, as plain data.

An expected-units file holds, per sample, what each unit must say: the model, the system prompt,
the user turns, the tool calls in the history with their arguments, the tool results with the
call ids they answer, the tools offered, the usage and the answer; and what the readers could not
use, by reason. It is written by hand from the trace (and checked against the backend's own
normalisation where one exists), never generated from the reader's output.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

from agent_backtest.api import ReadingOptions
from agent_backtest.providers.client import CallPolicy, ModelClient
from agent_backtest.providers.config import ProviderSettings
from agent_backtest.providers.openai import OpenAIProvider
from agent_backtest.units import AgentConfig, Unit
from agent_backtest.units.source import UnitSource


def unit_fields(unit: Unit) -> dict[str, Any]:
    """The checked fields of one unit."""
    request, golden = unit.request, unit.golden
    messages = request.messages
    usage = golden.usage.model_dump(exclude_none=True) if golden.usage else None
    return {
        "model": request.model,
        "system": [m.text() for m in messages if m.role in ("system", "developer")],
        "user": [m.text() for m in messages if m.role == "user"],
        "history_calls": [
            [call.name, call.arguments] for m in messages for call in m.tool_calls or []
        ],
        "tool_results": [[m.tool_call_id, m.text()] for m in messages if m.role == "tool"],
        "tools": None if request.tools is None else [tool.name for tool in request.tools],
        "usage": usage,
        "answer_text": golden.message.text() or None,
        "answer_calls": [[c.name, c.arguments] for c in golden.message.tool_calls or []],
        "finish_reason": golden.finish_reason,
    }


def read_sample(path: Path) -> dict[str, Any]:
    """What the readers make of one sample: its units' fields, and the steps and records left
    out, by reason."""
    source = UnitSource([path], ReadingOptions().read_options(), AgentConfig())
    units = [unit_fields(unit) for unit in source]
    skipped = source.skipped_steps() + source.skipped_records()
    return {"units": units, "skipped": dict(sorted(Counter(skipped).items()))}


def units_of(path: Path) -> list[Unit]:
    """The units of one recording, read as ``abt units`` reads it."""
    return list(UnitSource([path], ReadingOptions().read_options(), AgentConfig()))


def assert_replayable(units: list[Unit]) -> None:
    """Every unit's request, sent as a replay sends it, is taken by a server that checks bodies
    the way hosted chat-completions APIs do."""
    from tests.fake_openai import FakeOpenAI

    with FakeOpenAI(strict=True) as server:
        settings = ProviderSettings(type="openai", base_url=server.base_url)
        policy = CallPolicy(timeout=5.0, max_retries=0, backoff_initial=0.0)

        async def send_all() -> list[object]:
            client = ModelClient(OpenAIProvider("openai", settings, "sk-test"), policy)
            try:
                return [await client.generate(unit.request, "gpt-4o", 0) for unit in units]
            finally:
                await client.provider.aclose()

        outcomes = asyncio.run(send_all())
    assert server.refusals == []
    assert len(outcomes) == len(units)


def unit(**fields: Any) -> dict[str, Any]:
    """An expected unit: the fields of a one-turn call with no history, overridden."""
    return {
        "answer_calls": [],
        "answer_text": None,
        "finish_reason": None,
        "history_calls": [],
        "model": None,
        "system": [],
        "tool_results": [],
        "tools": [],
        "usage": None,
        "user": [],
        **fields,
    }
