"""Reading flows files: JSONL, JSON and YAML, with the line of every mistake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_backtest.errors import InputError
from agent_backtest.simulate.flows import read_flows

SCRIPTED = {"id": "calendar/week 1", "family": "calendar", "turns": [{"user": "This week?"}]}
SIMULATED = {
    "id": "refund",
    "family": "billing",
    "seed_id": "seed-7",
    "user": {"instructions": "Get a refund for order 12", "known_info": "order 12"},
    "expect_tools": ["refund_order"],
    "mutates": True,
}


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        read_flows(path)
    return str(caught.value)


def test_jsonl_flows_are_read_in_order_with_their_lines_and_ids_sanitised(tmp_path: Path) -> None:
    path = write(tmp_path / "flows.jsonl", f"{json.dumps(SCRIPTED)}\n\n{json.dumps(SIMULATED)}\n")
    flows = read_flows(path)
    assert [(f.flow.id, f.line) for f in flows] == [("calendar-week-1", 1), ("refund", 3)]
    assert flows[1].flow.seed_id == "seed-7"
    assert flows[0].flow.seed_id == "calendar-week-1"  # a flow without one is its own origin
    assert flows[1].flow.user is not None and flows[1].flow.user.max_turns == 6


def test_a_long_id_is_cut_to_60_characters(tmp_path: Path) -> None:
    flow = {**SCRIPTED, "id": "x" * 80}
    assert read_flows(write(tmp_path / "f.jsonl", json.dumps(flow)))[0].flow.id == "x" * 60


def test_a_bad_jsonl_line_is_named(tmp_path: Path) -> None:
    path = write(tmp_path / "flows.jsonl", f"{json.dumps(SCRIPTED)}\n{{not json\n")
    assert error_of(path).startswith(f"{path}: line 2: not valid JSON")


def test_a_flow_missing_a_field_names_its_line_and_the_field(tmp_path: Path) -> None:
    broken = {"id": "a", "turns": [{"user": "hi"}]}
    path = write(tmp_path / "flows.jsonl", f"{json.dumps(SCRIPTED)}\n{json.dumps(broken)}\n")
    assert error_of(path) == f"{path}: line 2: family: Field required"


def test_a_flow_with_both_turns_and_a_user_is_refused(tmp_path: Path) -> None:
    both = {**SIMULATED, "turns": [{"user": "hi"}]}
    message = error_of(write(tmp_path / "f.jsonl", json.dumps(both)))
    assert "line 1" in message and "either turns" in message


def test_an_unknown_key_in_a_turn_is_refused_with_its_path(tmp_path: Path) -> None:
    flow = {**SCRIPTED, "turns": [{"user": "hi", "expected": "x"}]}
    message = error_of(write(tmp_path / "f.jsonl", json.dumps(flow)))
    assert "line 1: turns.0.expected: Extra inputs are not permitted" in message


def test_ids_that_become_the_same_name_both_lines(tmp_path: Path) -> None:
    other = {**SCRIPTED, "id": "calendar:week:1"}
    lines = [json.dumps(SCRIPTED), json.dumps(SIMULATED), json.dumps(other)]
    message = error_of(write(tmp_path / "f.jsonl", "\n".join(lines) + "\n"))
    assert message.startswith(f"{tmp_path / 'f.jsonl'}: line 3: flow id 'calendar-week-1'")
    assert "on line 1" in message


def test_a_pretty_json_list_names_the_line_each_flow_starts_on(tmp_path: Path) -> None:
    broken = {"id": "b", "family": "x", "turns": []}
    path = write(tmp_path / "flows.json", json.dumps([SCRIPTED, SIMULATED, broken], indent=2))
    starts = [n for n, line in enumerate(path.read_text().splitlines(), 1) if line == "  {"]
    assert error_of(path) == f"{path}: line {starts[2]}: turns needs at least one turn"
    good = write(tmp_path / "good.json", json.dumps([SCRIPTED, SIMULATED], indent=2))
    assert [f.line for f in read_flows(good)] == [2, 11]


def test_a_json_object_holding_flows_is_read_on_one_line_or_many(tmp_path: Path) -> None:
    document = {"version": 1, "flows": [SCRIPTED, SIMULATED]}
    for name, indent in (("one.json", None), ("many.json", 1)):
        path = write(tmp_path / name, json.dumps(document, indent=indent))
        assert [f.flow.id for f in read_flows(path)] == ["calendar-week-1", "refund"]
    lines = read_flows(tmp_path / "many.json")
    assert lines[0].line == 4  # {, "version", "flows": [, then the first flow


def test_a_json_document_that_is_not_flows_is_refused(tmp_path: Path) -> None:
    assert "'flows'" in error_of(write(tmp_path / "f.json", '{\n "items": []\n}'))


def test_yaml_flows_name_the_line_of_a_bad_flow(tmp_path: Path) -> None:
    text = """\
flows:
  - id: week
    family: calendar
    turns:
      - user: What is on this week?
        expect: lists the events
  - id: broken
    turns:
      - user: hello
"""
    path = write(tmp_path / "flows.yaml", text)
    assert error_of(path) == f"{path}: line 7: family: Field required"
    fixed = write(
        tmp_path / "ok.yml",
        text.replace(
            "    turns:\n      - user: hello", "    family: x\n    turns:\n      - user: hello"
        ),
    )
    flows = read_flows(fixed)
    assert [(f.flow.id, f.line) for f in flows] == [("week", 2), ("broken", 7)]
    assert flows[0].flow.turns is not None and flows[0].flow.turns[0].expect == "lists the events"


def test_broken_yaml_names_its_line(tmp_path: Path) -> None:
    path = write(tmp_path / "flows.yaml", "- id: a\n  family: [unclosed\n")
    assert error_of(path).startswith(f"{path}: line 3")


def test_a_missing_or_empty_file_is_one_clear_error(tmp_path: Path) -> None:
    assert "no such flows file" in error_of(tmp_path / "absent.jsonl")
    assert "holds no flows" in error_of(write(tmp_path / "empty.jsonl", "\n"))
