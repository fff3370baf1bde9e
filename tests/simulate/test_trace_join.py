"""The demo agent's own OTLP export joined to the conversations of a simulate run, and its model
calls replayed: the loop from a simulated conversation back to a backtest, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.conftest import ROOT
from tests.fake_openai import FakeOpenAI
from tests.optional import require
from tests.simulate.demo_app import demo_agent, lookup_model

require("fastapi", "pip install 'agent-backtest[demo]'")
require("uvicorn", "pip install 'agent-backtest[demo]'")
require("opentelemetry.sdk", "pip install 'agent-backtest[demo]'")
require("opentelemetry.exporter.otlp.proto.common", "pip install 'agent-backtest[demo]'")

DEMO = ROOT / "examples" / "demo_agent"
FLOWS = """
- id: notes-twice
  family: notes
  turns:
    - user: Which notes do I have?
    - user: And which notes again?
- id: calendar-day
  family: calendar
  turns:
    - user: What is on my calendar on 2 March?
"""
MODEL_CALLS = 6
"""Two per turn (a tool call, then the answer), three turns."""


@pytest.fixture(scope="module")
def traced_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A run of the two flows through the app, which exported its own traces as it went."""
    tmp_path = tmp_path_factory.mktemp("traces")
    db, run, otlp = tmp_path / "demo.db", tmp_path / "run", tmp_path / "agent-traces.jsonl"
    flows = tmp_path / "flows.yaml"
    flows.write_text(FLOWS, encoding="utf-8")
    with (
        FakeOpenAI(reply=lookup_model) as model,
        demo_agent(db, model.base_url, otlp_file=otlp) as url,
    ):
        target = tmp_path / "target.toml"
        text = (DEMO / "target.toml").read_text(encoding="utf-8")
        target.write_text(text.replace("http://127.0.0.1:8011", url), encoding="utf-8")
        result = CliRunner().invoke(
            app,
            [
                "simulate", "run", str(flows), "--out", str(run), "--target", str(target),
                "--agent-config", str(DEMO / "agent.toml"), "--skip-judge",
            ],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    return run, otlp


def test_the_agents_traces_join_their_conversations_by_trace_id(
    traced_run: tuple[Path, Path],
) -> None:
    run, otlp = traced_run
    result = CliRunner().invoke(app, ["simulate", "traces", str(run), str(otlp)])
    assert result.exit_code == 0, result.output
    assert "joined 2 of 2 conversations" in result.output
    sessions = [
        json.loads(line)
        for line in (run / "agent_sessions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    conversations = {
        c["flow_id"]: c
        for c in map(json.loads, (run / "conversations.jsonl").read_text().splitlines())
    }
    assert sorted(s["id"] for s in sessions) == ["calendar-day", "notes-twice"]
    for session in sessions:
        conversation = conversations[session["id"]]
        joined = session["metadata"]["simulate"]
        assert joined["agent_session_ids"] == [conversation["agent_session_id"]]
        sent = [turn["traceparent"].split("-")[1] for turn in conversation["turns"]]
        assert session["metadata"]["trace_ids"] == sent  # one trace per turn, in order
    notes = next(s for s in sessions if s["id"] == "notes-twice")
    calls = [step["llm"] for turn in notes["turns"] for step in turn["steps"] if "llm" in step]
    assert len(calls) == 4
    asked = calls[2]["request"]["messages"]  # turn 2's first call carries turn 1 as history
    assert asked[0]["role"] == "system" and asked[-1]["content"] == "And which notes again?"
    assert calls[0]["response"]["message"]["tool_calls"][0]["name"] == "list_notes"


def test_replay_of_the_joined_sessions_has_a_unit_per_agent_model_call(
    traced_run: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, otlp = traced_run
    joined = tmp_path / "joined.jsonl"
    result = CliRunner().invoke(
        app, ["simulate", "traces", str(run), str(otlp), "--out", str(joined)]
    )
    assert result.exit_code == 0, result.output
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with FakeOpenAI() as candidate:
        result = CliRunner().invoke(
            app,
            [
                "replay", str(joined), "--model", "openai/candidate-1",
                "--base-url", candidate.base_url, "--out", str(tmp_path / "replay"),
                "--no-cache",
            ],
        )  # fmt: skip
        sent = candidate.total
    assert result.exit_code == 0, result.output
    results = (tmp_path / "replay" / "results.jsonl").read_text().splitlines()
    assert len(results) == sent == MODEL_CALLS
    assert not any("error" in json.loads(line) for line in results)


def test_traces_of_another_run_join_nothing_and_write_nothing(
    traced_run: tuple[Path, Path], tmp_path: Path
) -> None:
    run, _ = traced_run
    other = tmp_path / "other.jsonl"
    line = (traced_run[1]).read_text(encoding="utf-8").splitlines()[0]
    record = json.loads(line)
    for resource in record["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["traceId"] = "AAAAAAAAAAAAAAAAAAAAAA=="
                span.pop("parentSpanId", None)
                span["attributes"] = [
                    a for a in span.get("attributes", []) if a["key"] != "session.id"
                ]
    other.write_text(json.dumps(record) + "\n", encoding="utf-8")
    out = tmp_path / "none.jsonl"
    result = CliRunner().invoke(
        app, ["simulate", "traces", str(run), str(other), "--out", str(out)]
    )
    assert result.exit_code == 2, result.output
    assert "belongs to a conversation" in result.output
    assert not out.exists()


CHAT_TARGET = """
name = "chat"
type = "http"
base_url = "{base_url}"
headers = {{ x-conversation-id = "${{conversation_id}}" }}

[turn]
path = "/chat/completions"
body = {{ model = "m", messages = [{{ role = "user", content = "${{message}}" }}] }}

[answer]
format = "json"
text = "choices.0.message.content"
"""


def test_every_turn_carries_a_traceparent_and_the_conversation_id_header(
    tmp_path: Path,
) -> None:
    flows = tmp_path / "flows.yaml"
    flows.write_text(
        "- {id: two, family: chat, turns: [{user: hello}, {user: again}]}\n", encoding="utf-8"
    )
    with FakeOpenAI() as agent:
        target = tmp_path / "target.toml"
        target.write_text(CHAT_TARGET.format(base_url=agent.base_url), encoding="utf-8")
        result = CliRunner().invoke(
            app,
            ["simulate", "run", str(flows), "--target", str(target), "--out",
             str(tmp_path / "run"), "--skip-judge"],
        )  # fmt: skip
        received = list(agent.headers)
    assert result.exit_code == 0, result.output
    [conversation] = [
        json.loads(line)
        for line in (tmp_path / "run" / "conversations.jsonl").read_text().splitlines()
    ]
    sent = [turn["traceparent"] for turn in conversation["turns"]]
    assert [headers["traceparent"] for headers in received] == sent
    assert len({parent.split("-")[1] for parent in sent}) == 2  # a trace of its own per turn
    assert {headers["x-conversation-id"] for headers in received} == {
        conversation["conversation_id"]
    }
    assert conversation["stop_reason"] == "script_end"
