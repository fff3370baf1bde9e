"""The model target with the tools of a real MCP server (tests/simulate/mcp_server.py, FastMCP)
started over stdio: its tools listed and offered, called, its errors kept as tool errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.api.simulate import simulate_run
from agent_backtest.errors import InputError
from tests.fake_openai import FakeOpenAI
from tests.optional import require
from tests.simulate.conftest import flows_file, scripted
from tests.simulate.test_model_target import abt, config_file, in_tmp, tool_call

require("mcp", "pip install 'agent-backtest[mcp]'")  # the MCP server the tests start

SERVER = Path(__file__).with_name("mcp_server.py")

__all__ = ["in_tmp"]  # the fixture that runs each test in its tmp_path


def agent_model(body: dict[str, Any]) -> str | dict[str, Any]:
    """Asks for the tool the user names, with the rest of the message as its argument; answers
    a tool result by quoting it."""
    messages = body["messages"]
    if messages[-1]["role"] == "tool":
        return f"done: {messages[-1]['content']}"
    name, _, rest = messages[-1]["content"].partition(" ")
    argument = {"add_note": "text", "check_store": "reason"}.get(name)
    if argument is None:
        return f"you said {messages[-1]['content']}"
    return tool_call((name, {argument: rest}))


pytestmark = pytest.mark.fake_openai(reply=agent_model)  # the scripted agent model


def mcp_target(tmp_path: Path, offered: str = "", **server: Any) -> Path:
    settings = {"command": sys.executable, "args": [str(SERVER)]} | server
    table = "".join(f"{key} = {json.dumps(value)}\n" for key, value in settings.items())
    table += f"env = {{ MCP_CALLS = {json.dumps(str(tmp_path / 'mcp-calls.jsonl'))} }}\n"
    path = tmp_path / "mcp.toml"
    path.write_text(
        f'name = "notes-mcp"\ntype = "model"\ntimeout = 30\n{offered}[tools.mcp]\n{table}'
    )
    return path


def calls(tmp_path: Path) -> list[dict]:
    path = tmp_path / "mcp-calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_the_servers_tools_are_listed_offered_and_called(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    flows = [scripted("m", "add_note buy milk", "check_store asked", "thanks")]
    done = simulate_run(
        flows_file(tmp_path / "flows.jsonl", flows),
        target=mcp_target(tmp_path),
        out=tmp_path / "run",
        roles={"agent": "sim/agent-model"},
        config_file=config_file(tmp_path, fake_openai),
        skip_judge=True,
    )
    offered = fake_openai.bodies[0]["tools"]
    assert sorted(tool["function"]["name"] for tool in offered) == ["add_note", "check_store"]
    add = next(tool["function"] for tool in offered if tool["function"]["name"] == "add_note")
    assert add["description"] == "Save a note."
    assert add["parameters"]["properties"]["text"]["type"] == "string"
    assert calls(tmp_path) == [
        {"tool": "add_note", "arguments": {"text": "buy milk"}},
        {"tool": "check_store", "arguments": {"reason": "asked"}},
    ]
    note, store, thanks = done.conversations()[0].turns
    assert note.tool_calls[0].result == "saved note: buy milk"
    assert note.final_text == "done: saved note: buy milk"
    [failure] = store.tool_calls
    assert failure.result is None and "the notes store is down (asked)" in (failure.error or "")
    assert store.final_text is not None and store.final_text.startswith("done: Error: ")
    assert thanks.final_text == "you said thanks"
    code, output = abt("units", tmp_path / "run" / "sessions.jsonl", "-o", tmp_path / "u.jsonl")
    assert code == 0, output
    assert len((tmp_path / "u.jsonl").read_text().splitlines()) == fake_openai.total == 5


def test_offered_tools_must_be_the_servers(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    offered = '[[tools.offered]]\ntype = "function"\nfunction = { name = "delete_all" }\n'
    with pytest.raises(InputError, match="offers 'delete_all', which the MCP server does not"):
        simulate_run(
            flows_file(tmp_path / "flows.jsonl", [scripted("a", "hi")]),
            target=mcp_target(tmp_path, offered),
            out=tmp_path / "run",
            roles={"agent": "sim/agent-model"},
            config_file=config_file(tmp_path, fake_openai),
            skip_judge=True,
        )
    assert fake_openai.total == 0 and not (tmp_path / "run").exists()


def test_a_server_that_does_not_start_is_the_target_files_error(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    target = mcp_target(tmp_path, args=["-c", "import sys; sys.exit(3)"])
    code, output = abt(
        "simulate", "run", flows_file(tmp_path / "flows.jsonl", [scripted("a", "hi")]),
        "--target", target, "--out", "run", "--skip-judge", "--agent", "sim/agent-model",
        "--config", config_file(tmp_path, fake_openai),
    )  # fmt: skip
    assert code == 2, output
    [line] = output.strip().splitlines()
    assert line.startswith(f"abt: error: {target}: tools.mcp: the MCP server did not start"), line
    assert fake_openai.total == 0
