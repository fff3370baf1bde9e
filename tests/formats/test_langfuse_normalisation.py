"""abt's reading of the framework traces against Langfuse's own normalisation of the same traces.

Langfuse publishes, beside each trace, the chat messages it makes of every observation
(``*.chatml.json``). For every unit, the roles, texts and tool-call names of the request and of
the answer are compared with Langfuse's; each difference is listed below with the reason it is
deliberate, and a difference that is not listed (or a listed one that went away) fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.api import ReadingOptions
from agent_backtest.trace import Message
from agent_backtest.units import AgentConfig
from agent_backtest.units.source import UnitSource

CORPUS = Path(__file__).parents[1] / "fixtures" / "frameworks" / "langfuse"
SAMPLES = sorted(CORPUS.glob("*.trace.json"))

NOT_NORMALISED = "Langfuse could not normalise it; abt reads it from the span's attributes"
OPENAI_ROLES = "abt names roles as the chat-completions API does (model → assistant, a tool's "
OPENAI_ROLES += "result → tool) so that the request can be sent again"
DELIBERATE: dict[tuple[str, str, str], str] = {
    ("agno-2025-06-11", "ca136de468e156c9", "input"): NOT_NORMALISED,
    ("claude-agent-2025-12-22", "e9aac170e5d48125", "input"): NOT_NORMALISED,
    ("llamaindex-2025-06-05", "7ca8b22f6628d0c7", "input"): NOT_NORMALISED,
    ("llamaindex-2025-06-05", "7ca8b22f6628d0c7", "output"): NOT_NORMALISED,
    ("crewai-2025-07-11", "231c43964b7e7e63", "output"): NOT_NORMALISED,
    ("google-adk-2025-08-28", "bded677884f031ce", "input"): OPENAI_ROLES,
    ("langgraph-js-2025-10-30", "0856a1825ccee968", "input"): OPENAI_ROLES,
    ("koog-2025-08-26", "e44e72cf2d221781", "input"): "Koog records the assistant's tool calls "
    "as a tool message whose content is the JSON of the calls; abt reads them as the calls",
    ("koog-2025-08-26", "042f9350c3729147", "output"): "the same Koog answer: tool calls as "
    "JSON content, read as the calls",
    ("microsoft-agent-2025-12-17", "2406e8343fd49c0e", "input"): "the framework records the "
    "instructions only on the invoke_agent span; abt puts them back in front of the call",
    ("microsoft-agent-2025-12-17", "b0913e7cd82d72b8", "input"): "the call continues a "
    "server-side conversation; abt rebuilds the history the model saw from the earlier call",
    ("openai-agents-2025-09-30", "98870087af69bf06", "input"): "Langfuse leaves out the system "
    "message the span records (llm.input_messages.0); the model saw it",
    ("openai-agents-2025-09-30", "90d94774e8e3724d", "input"): "the same system message",
    ("pydantic-ai-2025-06-06", "5cb389a3bdd21a6e", "output"): "Langfuse shows the gen_ai.choice "
    "event without its message; abt reads the message as the answer",
    ("pydantic-ai-tools-2025-06-06", "5cb389a3bdd21a6e", "output"): "the same gen_ai.choice",
}


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return json.dumps(content)


def theirs(data: list[dict[str, Any]]) -> list[tuple[Any, str, tuple[str, ...]]]:
    def names(message: dict[str, Any]) -> tuple[str, ...]:
        return tuple(call.get("name") for call in message.get("tool_calls") or [])

    return [(m.get("role"), _text(m.get("content")).strip(), names(m)) for m in data]


def ours(messages: list[Message]) -> list[tuple[Any, str, tuple[str, ...]]]:
    return [(m.role, m.text().strip(), tuple(c.name for c in m.tool_calls or [])) for m in messages]


def differences(sample: Path) -> set[tuple[str, str, str]]:
    chatml = json.loads(sample.with_name(sample.name.replace(".trace", ".chatml")).read_text())
    name = sample.name.removesuffix(".trace.json")
    found = set()
    for unit in UnitSource([sample], ReadingOptions().read_options(), AgentConfig()):
        normalised = chatml[unit.step_id]
        request, answer = normalised["input"], normalised["output"]
        if not request["success"] or ours(unit.request.messages) != theirs(request["data"]):
            found.add((name, unit.step_id, "input"))
        answered = theirs(answer["data"]) if answer["success"] else []
        joined = (
            "".join(text for _, text, _ in answered).strip(),
            tuple(c for *_, cs in answered for c in cs),
        )
        message = unit.golden.message
        if (message.text().strip(), tuple(c.name for c in message.tool_calls or [])) != joined:
            found.add((name, unit.step_id, "output"))
    return found


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: path.name.split(".")[0])
def test_every_difference_from_langfuse_is_deliberate(sample: Path) -> None:
    name = sample.name.removesuffix(".trace.json")
    listed = {key for key in DELIBERATE if key[0] == name}
    assert differences(sample) == listed
