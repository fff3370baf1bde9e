"""What is checked in every test a teacher writes, and what a capability file must be."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_backtest.errors import InputError
from agent_backtest.formats.tools_file import load_tools_file
from agent_backtest.simulate.capabilities import Family, Seed, read_capabilities
from agent_backtest.simulate.generation import check_test, message_problem
from tests.simulate.teacher import written_test

EXAMPLES = Path(__file__).parents[2] / "examples" / "demo_agent"
FAMILY = Family(
    name="notes", description="Notes.", tools=["add_note"], seeds=[Seed(turns=["hi"])] * 2
)
CATALOGUE = {"add_note", "list_notes"}


def checked(**changes: object) -> tuple:
    return check_test({**written_test("notes", 1), **changes}, FAMILY, CATALOGUE, "sha256:x")


def test_a_valid_test_becomes_a_flow_of_its_seed() -> None:
    flow, problem = checked(seed=2, expect_tools=["add_note"])
    assert problem is None and flow is not None
    assert flow.seed_id == "notes-seed-2" and flow.teacher_prompt_sha256 == "sha256:x"
    assert flow.mutates is None and flow.expect_tools == ["add_note"]


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"seed": 3}, "seed: give the number of its seed conversation, 1 to 2"),
        ({"seed": True}, "seed: give the number"),
        ({"turns": [{"user": "hi", "expect": "greets"}]}, "turns: 1 user turns; write 2 to 4"),
        ({"turns": [{"user": "a", "expect": "b"}] * 5}, "turns: 5 user turns"),
        ({"turns": [{"user": "a", "expect": "answers a"}, {"user": "c"}]}, "turns[2].expect"),
        ({"turns": [{"user": "a", "expect": "answers a"}, {"user": "c", "expect": "TBD"}]},
         "turns[2].expect: state the outcome"),
        ({"turns": [{"user": "a", "expect": "answers a"}, {"user": " ", "expect": "answers"}]},
         "turns[2].user: the user's message is empty"),
        ({"expect_tools": ["send_email"]}, "'send_email' is not a tool of the catalogue"),
        ({"expect_tools": "add_note"}, "expect_tools: a list of tool names"),
        ({"purpose": ["not", "text"]}, "purpose: a sentence"),
        ({"purpose": "checks notes", "extra": 1}, None),  # what the rules do not name is ignored
    ],
)  # fmt: skip
def test_every_rule_names_what_was_wrong(changes: dict, problem: str | None) -> None:
    flow, found = checked(**changes)
    if problem is None:
        assert found is None and flow is not None
    else:
        assert flow is None and found is not None and problem in found


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("delete note #3 please", "an id"),
        ("what is on order ORD-20391?", "an id"),
        ("look up id 42", "an id"),
        ("open 3f2b6c1e-9a4d-4e8f-b1c2-0d9e8f7a6b5c", "an id"),
        ("my key is sk-abcdefghijklmnopqrstuvwxyz123456", "a secret"),
        ("delete all my notes", "destructive"),
        ("can you clear the whole calendar", "destructive"),
        ("DROP TABLE notes", "destructive"),
    ],
)
def test_invented_ids_secrets_and_destructive_requests_are_refused(message: str, kind: str) -> None:
    problem = message_problem(message)
    assert problem is not None and kind in problem


@pytest.mark.parametrize(
    "message",
    [
        "What's on my calendar on 2026-03-02 at 09:30?",
        "delete the groceries note",
        "add a note: buy 12 eggs",
        "and the other one?",
    ],
)
def test_ordinary_messages_pass(message: str) -> None:
    assert message_problem(message) is None


def test_the_demo_agents_capability_file_reads_against_its_tools() -> None:
    tools = {tool.name for tool in load_tools_file(EXAMPLES / "tools.json")}
    families = read_capabilities(EXAMPLES / "capabilities.yaml", tools).families
    assert [family.name for family in families] == ["notes_find", "notes_write", "calendar"]
    assert all(family.seeds and set(family.tools) <= tools for family in families)


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("families:\n  - name: a b\n    description: x\n    seeds: [[hi]]\n", "line 2",
         "families.0.name: a family name keeps to letters, digits, _ and -"),
        ("families:\n  - name: a\n    description: x\n    seeds:\n      - [hi]\n"
         "      - turns: []\n", "line 6", "families.0.seeds.1.turns"),
        ("families:\n  - name: a\n    description: x\n    seeds: [[hi]]\n    color: red\n",
         "line 5", "families.0.color: Extra inputs are not permitted"),
        ("- name: a\n  description: x\n  seeds: [[hi]]\n- name: a\n  description: y\n"
         "  seeds: [[yo]]\n", "line 4", "family 'a' is listed twice"),
        ("families: [\n", "line 2", "not valid YAML"),
    ],
)  # fmt: skip
def test_a_capability_files_mistake_names_its_line(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    path = tmp_path / "caps.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_capabilities(path, CATALOGUE)
    assert caught.value.location is not None and caught.value.location.startswith(where)
    assert message in caught.value.message


def test_a_json_capability_file_names_its_lines_too(tmp_path: Path) -> None:
    path = tmp_path / "caps.json"
    path.write_text(
        '{"families": [\n  {"name": "a", "description": "x", "seeds": [["hi"]]},\n'
        '  {"name": "b", "description": "y",\n   "tools": ["nope"], "seeds": [["yo"]]}\n]}\n'
    )
    with pytest.raises(InputError) as caught:
        read_capabilities(path, CATALOGUE)
    assert caught.value.location == "line 4" and "names tool 'nope'" in caught.value.message
