"""Simulate run directories for the judge's tests, written from the contract's records, and a
judge served over HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_backtest.runs.manifest import describe_input
from agent_backtest.simulate.manifest import SimulateManifest, TargetRecord
from agent_backtest.simulate.models import (
    ConversationRecord,
    Flow,
    ScriptedTurn,
    ToolActivity,
    TurnRecord,
)
from agent_backtest.simulate.targets.turns import DEFAULT_RESULT_CHARS
from agent_backtest.trace import dump_record

NOTES_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add_note",
            "description": "Save a note with a title and a body.",
            "parameters": {
                "type": "object",
                "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
                "required": ["title"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "list_notes",
            "description": "List the saved notes.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
]
PASS = {
    "verdict": "pass",
    "score": 95,
    "owner": "none",
    "failure_category": "",
    "failed_turns": [],
    "evidence": "Turn 1 called add_note with the title and the answer confirms it.",
}
FAIL = {
    "verdict": "fail",
    "score": 20,
    "owner": "model",
    "failure_category": "claimed_without_call",
    "failed_turns": [1],
    "evidence": "Turn 1 says the note was saved but no add_note call was made.",
}


def note_flow(flow_id: str, expect_tools: list[str] | None = None) -> Flow:
    """A scripted one-turn flow that asks for a note."""
    return Flow(
        id=flow_id,
        family="notes",
        purpose="Saving a note",
        turns=[ScriptedTurn(user="Save a note called groceries.", expect="add_note is called")],
        expect_tools=expect_tools if expect_tools is not None else ["add_note"],
    )


def turn(
    index: int = 1,
    user: str = "Save a note called groceries.",
    final: str | None = "Saved your note groceries.",
    calls: list[ToolActivity] | None = None,
    offered: list[str] | None = None,
) -> TurnRecord:
    """One recorded turn; by default a good one that called add_note."""
    if calls is None:
        calls = [ToolActivity(name="add_note", arguments={"title": "groceries"}, result="ok")]
    return TurnRecord(
        index=index, user=user, final_text=final, tool_calls=calls, tools_offered=offered
    )


def conversation(
    flow_id: str, turns: list[TurnRecord] | None = None, transport_error: str | None = None
) -> ConversationRecord:
    """The conversation of one flow as a simulate run records it."""
    return ConversationRecord(
        flow_id=flow_id,
        family="notes",
        target="demo",
        turns=turns if turns is not None else [turn()],
        transport_error=transport_error,
        isolated=True,
        started_at="2026-01-01T00:00:00Z",
        seconds=1.5,
    )


def write_run(path: Path, flows: list[Flow], conversations: list[ConversationRecord]) -> Path:
    """A run directory holding these flows and conversations, with the run.json of a finished
    run of them through the ``demo`` HTTP target (a target file written beside the run)."""
    path.mkdir(parents=True, mode=0o700)
    (path / "flows.jsonl").write_bytes(b"".join(dump_record(f) + b"\n" for f in flows))
    (path / "conversations.jsonl").write_bytes(
        b"".join(dump_record(c) + b"\n" for c in conversations)
    )
    target = path.parent / f"{path.name}-target.toml"
    target.write_text('name = "demo"\ntype = "http"\nbase_url = "http://127.0.0.1:9"\n')
    manifest = SimulateManifest.new(
        flows=describe_input(path / "flows.jsonl"),
        target=TargetRecord(name="demo", type="http", file=describe_input(target)),
        result_chars=DEFAULT_RESULT_CHARS,
        status="completed",
    )
    manifest.played.flows = len(flows)
    manifest.played.conversations = len(conversations)
    manifest.save(path / "run.json")
    return path


def write_config(tmp_path: Path, *servers: tuple[str, str], **role: Any) -> Path:
    """abt.toml naming each (provider, base_url), and [roles.judge] settings (no retry wait)."""
    lines = []
    for name, base_url in servers:
        lines += [f"[providers.{name}]", 'type = "openai"', 'api_key_env = ""']
        lines += [f'base_url = "{base_url}"', ""]
    settings = {"max_retries": 0, "backoff_initial": 0, **role}
    for name in ("judge", "fallback_judge"):
        lines.append(f"[roles.{name}]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    path = tmp_path / "abt.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def prompt_of(body: dict[str, Any]) -> str:
    """The user message of a judge request."""
    return body["messages"][-1]["content"]


def flow_of(body: dict[str, Any]) -> str:
    """The flow a judge request is about."""
    found = re.search(r"flow (\S+) \(family", prompt_of(body))
    assert found, prompt_of(body)[:300]
    return found.group(1)


def is_correction(body: dict[str, Any]) -> bool:
    """True for the correction request."""
    return "review of this conversation could not be used" in " ".join(prompt_of(body).split())


def replies(answer: Any) -> Callable[[dict[str, Any]], str]:
    """A FakeOpenAI reply function from an answer (an object, sent as JSON, or text), or from a
    function of the request that returns one."""

    def reply(body: dict[str, Any]) -> str:
        value = answer(body) if callable(answer) else answer
        return value if isinstance(value, str) else json.dumps(value)

    return reply


def dead_base_url() -> str:
    """The URL of a port on 127.0.0.1 nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def verdict_lines(run: Path) -> list[dict[str, Any]]:
    """The records of verdicts.jsonl."""
    return [json.loads(line) for line in (run / "verdicts.jsonl").read_text().splitlines()]
