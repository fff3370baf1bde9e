"""``abt simulate generate``: a scripted teacher on 127.0.0.1 writes the flows; every test it
writes is checked, a family short or invalid is asked again quoting what was wrong, an
incomplete set writes nothing, and a second generation is answered from the cache."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path

import pytest

from agent_backtest.simulate.flows import read_flows
from agent_backtest.simulate.generation import MAX_ASKS
from tests.fake_openai import FakeOpenAI
from tests.simulate.conftest import abt
from tests.simulate.teacher import ScriptedTeacher, flows, teacher_config, write_inputs

PROMPT_FILE = (
    Path(__file__).parents[2] / "src" / "agent_backtest" / "simulate" / "prompts" / "teacher.v1.md"
)


@pytest.fixture(autouse=True)
def no_stray_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


def generate(tmp_path: Path, base_url: str, out: str = "flows.jsonl", n: int = 3) -> tuple:
    caps, tools = write_inputs(tmp_path)
    config = teacher_config(tmp_path, base_url)
    return abt(
        "simulate", "generate", caps, "--teacher", "main/teacher", "--per-family", n,
        "--tools", tools, "--out", out, "--config", config,
    )  # fmt: skip


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_valid_flows_are_written_with_the_prompt_sha_and_seed_ids_then_come_from_the_cache(
    tmp_path: Path,
) -> None:
    def answer(family: str, ask: int) -> dict:
        tools = ["add_note"] if family == "notes" else []
        return {
            "flows": [
                *flows(family, range(1, 3), tools=tools)["flows"],
                {**flows(family, range(3, 4))["flows"][0], "seed": 2 if family == "notes" else 1},
            ]
        }

    teacher = ScriptedTeacher(answer)
    with FakeOpenAI(reply=teacher) as server:
        code, output = generate(tmp_path, server.base_url)
        assert code == 0, output
        assert "6 flows for 2 families written to flows.jsonl" in output
        assert server.total == 2 and dict(teacher.asks) == {"notes": 1, "chat": 1}
        written = lines(tmp_path / "flows.jsonl")
        code, output = generate(tmp_path, server.base_url, out="again.jsonl")
        assert code == 0, output
        assert server.total == 2  # the same inputs: every answer from the cache
        assert "0 calls, 2 from the cache" in output
    assert lines(tmp_path / "again.jsonl") == written
    sha = "sha256:" + hashlib.sha256(PROMPT_FILE.read_bytes()).hexdigest()
    assert {flow["teacher_prompt_sha256"] for flow in written} == {sha}
    assert [flow["id"] for flow in written] == [
        "notes-1", "notes-2", "notes-3", "chat-1", "chat-2", "chat-3"
    ]  # fmt: skip
    assert [flow["seed_id"] for flow in written] == [
        "notes-seed-1", "notes-seed-1", "notes-seed-2", "chat-seed-1", "chat-seed-1", "chat-seed-1"
    ]  # fmt: skip
    assert written[0]["expect_tools"] == ["add_note"] and written[0]["turns"][1]["expect"]
    assert "mutates" not in written[0] or written[0]["mutates"] is None
    assert stat.S_IMODE((tmp_path / "flows.jsonl").stat().st_mode) == 0o600
    assert len(read_flows(tmp_path / "flows.jsonl")) == 6  # a flows file abt simulate run reads


def test_a_tool_not_in_the_catalogue_is_quoted_back_and_replaced(tmp_path: Path) -> None:
    def answer(family: str, ask: int) -> dict:
        if family == "notes" and ask == 1:
            bad = flows(family, range(3, 4), tools=["send_email"])["flows"]
            return {"flows": [*flows(family, range(1, 3))["flows"], *bad]}
        return flows(family, range(10 * ask, 10 * ask + 3))

    teacher = ScriptedTeacher(answer)
    with FakeOpenAI(reply=teacher) as server:
        code, output = generate(tmp_path, server.base_url)
    assert code == 0, output
    assert dict(teacher.asks) == {"notes": 2, "chat": 1}
    [correction] = teacher.corrections
    assert "test 3: expect_tools: 'send_email' is not a tool of the catalogue" in correction
    assert "Write 1 more tests" in correction
    assert "'notes question 1'" in correction  # the tests kept are listed, not asked again
    notes = [f for f in lines(tmp_path / "flows.jsonl") if f["family"] == "notes"]
    assert [f["turns"][0]["user"] for f in notes] == [
        "notes question 1", "notes question 2", "notes question 20"
    ]  # fmt: skip
    assert all("send_email" not in f["expect_tools"] for f in notes)


def test_a_short_answer_is_asked_again_for_the_count_missing(tmp_path: Path) -> None:
    def answer(family: str, ask: int) -> dict:
        if family == "chat":
            return flows(family, range(1, 2)) if ask == 1 else flows(family, range(5, 7))
        return flows(family, range(1, 4))

    teacher = ScriptedTeacher(answer)
    with FakeOpenAI(reply=teacher) as server:
        code, output = generate(tmp_path, server.base_url)
    assert code == 0, output
    assert dict(teacher.asks) == {"notes": 1, "chat": 2}
    assert "Write 2 more tests" in teacher.corrections[0]
    assert "2 tests fewer than asked for" in teacher.corrections[0]
    chat = [f["turns"][0]["user"] for f in lines(tmp_path / "flows.jsonl") if f["family"] == "chat"]
    assert chat == ["chat question 1", "chat question 5", "chat question 6"]


def test_an_incomplete_set_names_the_count_missing_per_family_and_writes_nothing(
    tmp_path: Path,
) -> None:
    def answer(family: str, ask: int) -> str | dict:
        if family == "chat":
            return "Sure! Here are some great test ideas: ask it about the weather."
        return flows(family, range(1, 3)) if ask == 1 else flows(family, range(1, 2))

    teacher = ScriptedTeacher(answer)
    with FakeOpenAI(reply=teacher) as server:
        code, output = generate(tmp_path, server.base_url)
    assert code == 1, output
    assert output.count("\n") == 1 and output.startswith("abt: error: ")
    assert "notes is missing 1 of 3" in output and "chat is missing 3 of 3" in output
    assert 'no JSON object with a "flows" list' in output
    assert "repeats another test" in output  # the repeated test was not counted twice
    assert dict(teacher.asks) == {"notes": MAX_ASKS, "chat": MAX_ASKS}
    assert not (tmp_path / "flows.jsonl").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".flows")] == []


def test_a_teacher_that_cannot_be_reached_is_the_models_failure(tmp_path: Path) -> None:
    from tests.simulate.judge_runs import dead_base_url

    code, output = generate(tmp_path, dead_base_url())
    assert code == 1, output
    assert "notes is missing 3 of 3" in output and "connection" in output
    assert not (tmp_path / "flows.jsonl").exists()


def test_failed_checks_ask_nothing_and_write_nothing(tmp_path: Path) -> None:
    teacher = ScriptedTeacher(lambda family, ask: flows(family, range(1, 4)))
    with FakeOpenAI(reply=teacher) as server:
        caps, tools = write_inputs(tmp_path)
        config = teacher_config(tmp_path, server.base_url)
        common = ("--per-family", 3, "--tools", tools, "--out", "flows.jsonl", "--config", config)
        code, output = abt("simulate", "generate", caps, "--teacher", "nowhere/x", *common)
        assert code == 2 and output.count("\n") == 1 and "--teacher" in output, output
        bad = tmp_path / "bad.yaml"
        bad.write_text(
            "families:\n  - name: notes\n    description: Notes.\n    tools: [add_note, "
            "send_email]\n    seeds: [[hi]]\n"
        )
        code, output = abt("simulate", "generate", bad, "--teacher", "main/t", *common)
        assert code == 2 and output.count("\n") == 1, output
        assert "bad.yaml: line 4: family 'notes' names tool 'send_email'" in output
        code, output = abt("simulate", "generate", caps, *common)
        assert code == 2 and "no model for the teacher role" in output, output
        (tmp_path / "flows.jsonl").write_text("{}\n")
        code, output = abt("simulate", "generate", caps, "--teacher", "main/t", *common)
        assert code == 2 and "--out: flows.jsonl already exists" in output, output
        assert server.total == 0
    assert (tmp_path / "flows.jsonl").read_text() == "{}\n"
