"""The agent server, target and flows files pointing at it, and a Chromium for the run pages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.simulate.agent_server import AgentServer, create_notes_db

JSON_ANSWER = """
[turn]
path = "/chat"
body = { session = "${session_id}", message = "${message}" }

[answer]
format = "json"
text = "reply"
tool_calls = "tools"
input_tokens = "usage.in"
output_tokens = "usage.out"
"""

SSE_ANSWER = """
[turn]
path = "/stream"
body = { session = "${session_id}", message = "${message}" }

[answer]
format = "sse"
done = ["done"]
events.token = { kind = "text_delta", text = "delta" }
events.tool_start = { kind = "tool_start", name = "tool", arguments = "input" }
events.tool_end = { kind = "tool_result", result = "output" }
events.error = { kind = "error" }
events.usage = { kind = "usage", input_tokens = "in", output_tokens = "out" }
events.tools = { kind = "tools_offered", tools = "offered" }
"""

SESSION = """
[session]
create = { path = "/sessions", id_path = "id" }
teardown = { method = "DELETE", path = "/sessions/${session_id}" }
"""


def target_file(
    path: Path, base_url: str, answer: str = JSON_ANSWER, extra: str = "", **settings: Any
) -> Path:
    """A target file for the agent at ``base_url``."""
    top = {"name": "notes-agent", "type": "http", "base_url": base_url, "retry_wait": 0.05}
    top |= settings
    lines = [f"{key} = {json.dumps(value)}" for key, value in top.items()]
    path.write_text("\n".join(lines) + "\n" + extra + SESSION + answer, encoding="utf-8")
    return path


def python_target(folder: Path, module: str, source: str, **settings: Any) -> Path:
    """A target file (``folder/py.toml``) for the Python agent ``source``, written as
    ``folder/agents/<module>.py``: its ``answer`` is called with each turn's conversation."""
    (folder / "agents").mkdir()
    (folder / "agents" / f"{module}.py").write_text(source, encoding="utf-8")
    top = {"name": "py", "type": "python", "callable": f"{module}:answer", "path": "agents"}
    lines = [f"{key} = {json.dumps(value)}" for key, value in (top | settings).items()]
    path = folder / "py.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def agent_config(path: Path, read_only: list[str], mutating: list[str] | None = None) -> Path:
    """An agent config declaring which tools only read the agent's data (and which change it)."""
    declared = {"read_only_tools": read_only, "mutating_tools": mutating or []}
    path.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in declared.items()), "utf-8")
    return path


def flows_file(path: Path, flows: list[dict[str, Any]]) -> Path:
    """A JSONL flows file."""
    path.write_text("".join(json.dumps(flow) + "\n" for flow in flows), encoding="utf-8")
    return path


def scripted(flow_id: str, *messages: str, family: str = "chat", **fields: Any) -> dict:
    """A scripted flow."""
    return {"id": flow_id, "family": family, "turns": [{"user": m} for m in messages], **fields}


@pytest.fixture
def notes_db(tmp_path: Path) -> Path:
    """The agent's SQLite database, with two notes."""
    return create_notes_db(tmp_path / "notes.db", ["buy milk", "call Ana"])


@pytest.fixture
def agent(tmp_path: Path, notes_db: Path) -> Iterator[AgentServer]:
    """The agent server on 127.0.0.1, logging to agent.log."""
    with AgentServer(tmp_path / "agent.log", notes_db, slow_seconds=2.0) as server:
        yield server


def abt(*args: object) -> tuple[int, str]:
    """``abt`` run in-process: its exit code and everything it printed (a crash re-raised)."""
    result = CliRunner().invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout + result.stderr
