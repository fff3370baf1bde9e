"""The demo agent app as a real process on 127.0.0.1, its model a scripted OpenAI-compatible
server: the chat stream's events, the SQLite rows its tools write, and its conversations judged
by ``abt simulate judge``."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.simulate.models import (
    ConversationRecord,
    Flow,
    ScriptedTurn,
    ToolActivity,
    TurnRecord,
)
from tests.conftest import ROOT
from tests.fake_openai import FakeOpenAI
from tests.optional import require
from tests.simulate.demo_app import call, demo_agent
from tests.simulate.judge_runs import PASS, replies, verdict_lines, write_config, write_run

# the demo app the tests start is a FastAPI app served by uvicorn
require("fastapi", "pip install 'agent-backtest[demo]'")
require("uvicorn", "pip install 'agent-backtest[demo]'")

DEMO_TOOLS = ROOT / "examples" / "demo_agent" / "tools.json"
Script = Callable[[dict[str, Any]], str | dict[str, Any]]


def notes_model(body: dict[str, Any]) -> str | dict[str, Any]:
    """The agent's model, scripted: one tool call per user request, then a short answer."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return f"Done: {last['content']}"
    said = last["content"]
    if said.startswith("Save a note"):
        return call("add_note", {"title": "Packing list", "body": "passport, charger"})
    if said.startswith("Delete"):
        return call("delete_note", {"id": 1})
    if said.startswith("What is on"):
        return call("list_events", {"day": "2026-03-02"})
    if said.startswith("Book"):
        return call("add_event", {"title": "Flight"})  # starts_at left out: refused by schema
    return "I can help with notes and the calendar."


def events(client: httpx.Client, url: str, session: str, message: str) -> list[tuple[str, Any]]:
    """The server-sent events of one turn, as (event, data)."""
    found = []
    with client.stream(
        "POST", f"{url}/sessions/{session}/messages", json={"message": message}
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                found.append((name, json.loads(line.removeprefix("data: "))))
    return found


def test_a_turn_streams_tool_events_and_the_answer_and_writes_the_row(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    with (
        FakeOpenAI(reply=notes_model) as model,
        demo_agent(db, model.base_url) as url,
        httpx.Client(timeout=30) as client,
    ):
        session = client.post(f"{url}/sessions").json()["id"]
        turn = events(client, url, session, "Save a note: packing list")
        deleting = events(client, url, session, "Delete the Japan trip note.")
        assert client.delete(f"{url}/sessions/{session}").status_code == 204
        assert client.delete(f"{url}/sessions/{session}").status_code == 404
    names = [name for name, _ in turn]
    assert names == ["tools_offered", "tool_start", "tool_result", "text", "final", "usage"]
    data = dict(turn)
    assert "add_note" in data["tools_offered"]["names"]
    assert data["tool_start"]["name"] == "add_note"
    assert json.loads(data["tool_start"]["arguments"])["title"] == "Packing list"
    assert json.loads(data["tool_result"]["output"]) == {"id": 3, "title": "Packing list"}
    assert data["final"]["text"].startswith("Done: ") and data["usage"]["input_tokens"] > 0
    assert dict(deleting)["tool_result"]["output"] == '{"deleted": 1}'
    rows = sqlite3.connect(db).execute("SELECT id, title, body FROM notes ORDER BY id").fetchall()
    assert rows == [(2, "Groceries", "Milk, eggs, rice."), (3, "Packing list", "passport, charger")]
    # The model saw the tools, then the tool's result, then the second turn with the first.
    second_call = model.bodies[1]["messages"]
    assert [tool["function"]["name"] for tool in model.bodies[0]["tools"]][:3] == [
        "list_notes", "add_note", "delete_note",
    ]  # fmt: skip
    assert second_call[-1]["role"] == "tool" and second_call[-1]["tool_call_id"] == "call_add_note"
    assert model.bodies[2]["messages"][1]["content"] == "Save a note: packing list"


def test_a_model_that_cannot_be_reached_is_an_error_event(tmp_path: Path) -> None:
    with FakeOpenAI(reply=notes_model) as model:
        gone = model.base_url
    with demo_agent(tmp_path / "demo.db", gone) as url, httpx.Client(timeout=30) as client:
        session = client.post(f"{url}/sessions").json()["id"]
        turn = events(client, url, session, "Save a note: anything")
        missing = client.post(f"{url}/sessions/nope/messages", json={"message": "hi"})
    assert [name for name, _ in turn] == ["tools_offered", "error"]
    assert "could not be reached" in dict(turn)["error"]["message"]
    assert missing.status_code == 404


@pytest.mark.local_model
def test_the_embedded_model_answers_a_turn_through_the_app(tmp_path: Path) -> None:
    with (
        demo_agent(tmp_path / "demo.db", None, "local/smollm2") as url,
        httpx.Client(timeout=600) as client,
    ):
        session = client.post(f"{url}/sessions").json()["id"]
        turn = events(client, url, session, "List my notes.")
    names = [name for name, _ in turn]
    # A 135M model may call tools until the loop's limit: that is an answer, not a failure to
    # reach the model.
    errors = [data["message"] for name, data in turn if name == "error"]
    assert all(message.startswith("no answer after") for message in errors), errors
    assert names[0] == "tools_offered" and names[-1] == "usage"
    assert "final" in names or "tool_start" in names


def play(client: httpx.Client, url: str, flow: Flow) -> ConversationRecord:
    """One scripted flow played through the app, recorded as a simulate run records it."""
    session = client.post(f"{url}/sessions").json()["id"]
    turns = []
    for index, scripted in enumerate(flow.turns or [], start=1):
        record = TurnRecord(index=index, user=scripted.user)
        for name, data in events(client, url, session, scripted.user):
            if name == "tools_offered":
                record.tools_offered = data["names"]
            elif name == "tool_start":
                record.tool_calls.append(
                    ToolActivity(name=data["name"], arguments=json.loads(data["arguments"]))
                )
            elif name == "tool_result":
                record.tool_calls[-1].result = data["output"]
            elif name == "final":
                record.final_text = data["text"]
            elif name == "error":
                record.error = data["message"]
        turns.append(record)
    client.delete(f"{url}/sessions/{session}")
    return ConversationRecord(
        flow_id=flow.id,
        family=flow.family,
        target="demo_agent",
        turns=turns,
        isolated=False,
        started_at="2026-03-01T00:00:00Z",
        seconds=0.0,
    )


def test_conversations_of_the_demo_app_are_judged_with_its_tools(tmp_path: Path) -> None:
    flows = [
        Flow(
            id="calendar-read",
            family="calendar",
            turns=[ScriptedTurn(user="What is on my calendar on 2 March?")],
            expect_tools=["list_events"],
        ),
        Flow(
            id="calendar-book",
            family="calendar",
            turns=[ScriptedTurn(user="Book my flight in the calendar.")],
            expect_tools=["add_event"],
            mutates=True,
        ),
    ]
    db = tmp_path / "demo.db"
    with (
        FakeOpenAI(reply=notes_model) as model,
        demo_agent(db, model.base_url) as url,
        httpx.Client(timeout=30) as client,
    ):
        records = [play(client, url, flow) for flow in flows]
    read = records[0].turns[0]
    assert read.tool_calls[0].name == "list_events" and "Dentist" in (
        read.tool_calls[0].result or ""
    )
    run = write_run(tmp_path / "run", flows, records)
    with FakeOpenAI(reply=replies(PASS)) as judge:
        config = write_config(tmp_path, ("main", judge.base_url))
        judging = ["simulate", "judge", str(run), "--judge", "main/grader"]
        result = CliRunner().invoke(
            app, [*judging, "--config", str(config), "--tools", str(DEMO_TOOLS)]
        )
    assert result.exit_code == 0, result.output
    verdicts = {line["flow_id"]: line for line in verdict_lines(run)}
    assert verdicts["calendar-read"]["verdict"] == "pass"
    booking = verdicts["calendar-book"]
    assert booking["verdict"] == "fail" and booking["check"] == "tool_call_rejected_by_schema"
    assert "arguments.starts_at: required, missing" in booking["evidence"]
    events_rows = sqlite3.connect(db).execute("SELECT count(*) FROM events").fetchone()
    assert events_rows == (2,)  # the refused call wrote nothing
