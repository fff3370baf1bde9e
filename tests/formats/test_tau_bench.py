"""τ-bench trajectories: every assistant message becomes a unit with the right request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.errors import InputError
from agent_backtest.formats import ReadOptions, SessionStream
from agent_backtest.formats.tools_file import load_tools_file
from agent_backtest.trace import Message
from agent_backtest.units import AgentConfig, Unit, units_from_session


def as_plain(message: Message) -> dict[str, Any]:
    """A canonical message in the shape of the raw trajectory message, for comparison."""
    plain: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        plain["tool_calls"] = [(c.id, c.name, c.arguments) for c in message.tool_calls]
    if message.tool_call_id is not None:
        plain["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        plain["name"] = message.name
    return plain


def raw_plain(raw: dict[str, Any]) -> dict[str, Any]:
    plain = {k: v for k, v in raw.items() if k in ("role", "content", "tool_call_id", "name")}
    if raw.get("tool_calls"):
        plain["tool_calls"] = [
            (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in raw["tool_calls"]
        ]
    return plain


def read_units(path: Path, tools: Path) -> list[Unit]:
    stream = SessionStream([path], ReadOptions(tools=load_tools_file(tools)))
    config = AgentConfig()
    return [u for s in stream for u in units_from_session(s, config) if isinstance(u, Unit)]


def test_every_assistant_message_is_a_unit_with_its_history_and_tools(
    tau_trajectories: Path, tau_tools: Path
) -> None:
    raw = json.loads(tau_trajectories.read_text())
    tools = json.loads(tau_tools.read_text())
    units = read_units(tau_trajectories, tau_tools)
    assert len(units) == 1381

    expected = [
        (item, index)
        for item in raw
        for index, message in enumerate(item["traj"])
        if message["role"] == "assistant"
    ]
    assert len(expected) == len(units)
    for unit, (item, index) in zip(units, expected, strict=True):
        assert unit.session_id == f"tau-task{item['task_id']}-trial{item['trial']}"
        assert [as_plain(m) for m in unit.request.messages] == [
            raw_plain(m) for m in item["traj"][:index]
        ]
        assert as_plain(unit.golden.message) == raw_plain(item["traj"][index])
        assert [t.name for t in unit.request.tools or []] == [t["function"]["name"] for t in tools]
        assert unit.request.tools[0].parameters == tools[0]["function"]["parameters"]
        assert unit.tools_supplied and not unit.tools_missing
        assert unit.kind == "action"


def test_units_are_flagged_when_tools_are_not_supplied(tau_trajectories: Path) -> None:
    stream = SessionStream([tau_trajectories], ReadOptions())
    session = next(iter(stream))
    units = [u for u in units_from_session(session, AgentConfig()) if isinstance(u, Unit)]
    assert units and all(u.tools_missing and u.request.tools is None for u in units)
    # τ-bench records no times, finish reasons or usage: they stay missing, never 0.
    assert all(u.started_at is None and u.golden.usage is None for u in units)
    assert all(u.golden.finish_reason is None for u in units)


def test_recorded_model_fills_in_only_what_is_missing(tau_trajectories: Path) -> None:
    stream = SessionStream([tau_trajectories], ReadOptions(recorded_model="gpt-4o"))
    session = next(iter(stream))
    unit = next(u for u in units_from_session(session, AgentConfig()) if isinstance(u, Unit))
    assert unit.request.model == "gpt-4o" and unit.recorded_model == "gpt-4o"
    assert "model from --recorded-model" in unit.notes


def test_tool_steps_carry_the_call_arguments_and_results(tau_trajectories: Path) -> None:
    session = next(iter(SessionStream([tau_trajectories], ReadOptions())))
    tool_steps = [s for s in session.steps() if s.kind == "tool"]
    assert tool_steps
    first = tool_steps[0].tool
    assert first is not None and first.name == "get_user_details"
    assert first.arguments == {"user_id": "mia_li_3668"}
    assert str(first.result).startswith('{"name": {"first_name": "Mia"')


def test_a_malformed_message_skips_its_trajectory(tmp_path: Path) -> None:
    path = tmp_path / "tau.json"
    good = {
        "task_id": 1,
        "trial": 0,
        "reward": 1.0,
        "info": {},
        "traj": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    }
    bad = {
        "task_id": 2,
        "trial": 0,
        "reward": 0.0,
        "info": {},
        "traj": [{"role": "user", "content": "hi"}, {"role": "robot", "content": "?"}],
    }
    path.write_text(json.dumps([good, bad]))
    stream = SessionStream([path], ReadOptions())
    sessions = list(stream)
    assert [s.id for s in sessions] == ["tau-task1-trial0"]
    skips = stream.summaries[0].skips
    assert skips.counts == {"malformed_message": 1}
    assert skips.examples[0].location == "$[1]"
    assert "traj[1]" in skips.examples[0].detail

    with pytest.raises(InputError, match=r"\$\[1\].*malformed_message"):
        list(SessionStream([path], ReadOptions(strict=True)))


def test_tool_errors_are_failed_steps(tau_trajectories: Path) -> None:
    sessions = list(SessionStream([tau_trajectories], ReadOptions()))
    tools = [s for session in sessions for s in session.steps() if s.kind == "tool"]
    failed = [s for s in tools if s.status == "error"]
    raw = json.loads(tau_trajectories.read_text())
    errors = [
        m
        for item in raw
        for m in item["traj"]
        if m["role"] == "tool" and m["content"].startswith("Error:")
    ]
    assert len(failed) == len(errors) == 63
    assert all(s.error and s.error.startswith("Error:") for s in failed)
    assert {s.status for s in tools} == {"ok", "error"}
