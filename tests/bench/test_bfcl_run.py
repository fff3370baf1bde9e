"""BFCL through ``abt bench run``: the pass/fail of every episode is BFCL's checker's verdict on
the same calls, within the documented differences.

The agent is a scripted model on 127.0.0.1 answering each question with one of the seeded
predictions of the matcher's BFCL tests (right ones and mutations), so the whole path is
exercised (the benchmark written from bfcl-eval, the tools offered, the episode, the
``tool_calls`` grader) on answers whose BFCL verdict is known.
"""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from agent_backtest.bench.bfcl import write_benchmark
from agent_backtest.bench.bfcl.tools import tool_name
from tests.bench.conftest import abt, write_config
from tests.fake_openai import FakeOpenAI
from tests.scoring.bfcl_cases import (
    Pair,
    bfcl_valid,
    build_pairs,
    explain,
    load_checker,
    load_entries,
    require_checker,
)

CHECKER = load_checker()
PER_CATEGORY = 30


@pytest.fixture(scope="module")
def chosen() -> dict[str, Pair]:
    """One seeded prediction for each of the first questions of every category, questions
    whose text is their own (the scripted agent tells them apart by it)."""
    require_checker(CHECKER)
    rng = random.Random(7)
    by_question: dict[str, list[Pair]] = {}
    for pair in build_pairs(load_entries()):
        by_question.setdefault(pair.entry.id, []).append(pair)
    texts: dict[str, int] = {}
    for pairs in by_question.values():
        texts[_question(pairs[0])] = texts.get(_question(pairs[0]), 0) + 1
    picked: dict[str, Pair] = {}
    taken: dict[str, int] = {}
    for question, pairs in by_question.items():
        category = pairs[0].entry.category
        if taken.get(category, 0) >= PER_CATEGORY or texts[_question(pairs[0])] > 1:
            continue
        taken[category] = taken.get(category, 0) + 1
        picked[question] = rng.choice(pairs)
    return picked


def _question(pair: Pair) -> str:
    """The text of a pair's question (its last user message)."""
    return _entry_messages(pair)[-1]["content"]


def _entry_messages(pair: Pair) -> list[dict[str, Any]]:
    return _messages_by_id(pair.entry.category)[pair.entry.id]


@functools.cache
def _messages_by_id(category: str) -> dict[str, list[dict[str, Any]]]:
    """Each question's messages by its id; a category's file read once, not once a question."""
    from agent_backtest.bench.bfcl.data import read_questions

    return {question.id: question.messages for question in read_questions(category)}


def _answer(pair: Pair) -> dict[str, Any]:
    """The assistant message making the pair's predicted calls, under the names offered."""
    calls = [
        {
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": tool_name(name), "arguments": json.dumps(arguments)},
        }
        for index, call in enumerate(pair.prediction)
        for name, arguments in call.items()
    ]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def test_bench_rewards_are_bfcls_verdicts_within_the_documented_differences(
    tmp_path: Path, chosen: dict[str, Pair]
) -> None:
    answers = {_question(pair): _answer(pair) for pair in chosen.values()}
    benchmark = write_benchmark(tmp_path / "bfcl")
    with FakeOpenAI(reply=lambda body: answers[body["messages"][-1]["content"]]) as fake:
        config = write_config(tmp_path / "abt.toml", fake=fake.base_url)
        case_ids = [arg for question in chosen for arg in ("--case-id", question)]
        code, output = abt(
            "bench", "run", benchmark, "--agent", "fake/agent", "--user", "scripted",
            "--out", tmp_path / "run", "--config", config, "--no-cache", *case_ids,
        )  # fmt: skip
    assert code == 0, output
    grades = [
        orjson.loads(line) for line in (tmp_path / "run" / "grades.jsonl").read_bytes().splitlines()
    ]
    assert len(grades) == len(chosen)
    verdicts = {g["case_id"]: g["reward"] == 1.0 for g in grades}
    disagreements = []
    for question, pair in chosen.items():
        theirs, ours = bfcl_valid(CHECKER, pair), verdicts[question]
        if theirs != ours and explain(CHECKER, pair, ours) is None:
            disagreements.append((question, pair.mutation, theirs, ours))
    assert disagreements == []
    assert 0 < sum(verdicts.values()) < len(verdicts)  # right and wrong answers both graded


LOCAL_CASES = ("simple_python_0", "simple_python_1", "multiple_0", "parallel_0")


@pytest.mark.local_model
def test_the_embedded_models_answers_get_bfcls_verdicts(tmp_path: Path) -> None:
    """The embedded model as the agent: each episode passes exactly when BFCL's checker finds
    its calls valid (within the documented differences)."""
    require_checker(CHECKER)
    from agent_backtest.bench.bfcl.data import read_questions
    from agent_backtest.bench.traces import read_transcript
    from tests.scoring.bfcl_cases import MODEL, python_language

    benchmark = write_benchmark(tmp_path / "bfcl")
    case_ids = [arg for case in LOCAL_CASES for arg in ("--case-id", case)]
    code, output = abt(
        "bench", "run", benchmark, "--agent", "local/smollm2", "--user", "scripted",
        "--out", tmp_path / "run", "--concurrency", "1", *case_ids,
    )  # fmt: skip
    assert code == 0, output
    run = tmp_path / "run"
    episodes = [orjson.loads(line) for line in (run / "episodes.jsonl").read_bytes().splitlines()]
    grades = {
        g["case_id"]: g["reward"]
        for g in map(orjson.loads, (run / "grades.jsonl").read_bytes().splitlines())
    }
    questions = {
        q.id: q
        for category in ("simple_python", "multiple", "parallel")
        for q in read_questions(category)
    }
    for episode in episodes:
        question = questions[episode["case_id"]]
        spelled = {tool_name(f["name"]): f["name"] for f in question.functions}
        prediction = [
            {spelled.get(c["function"]["name"], c["function"]["name"]): json.loads(
                c["function"]["arguments"]
            )}
            for message in read_transcript(run / episode["trace"])
            if message["role"] == "assistant"
            for c in message.get("tool_calls") or []
        ]  # fmt: skip
        valid = CHECKER.ast_checker(
            question.functions,
            prediction,
            question.ground_truth,
            python_language(),
            question.category,
            MODEL,
        )["valid"]
        assert (grades[episode["case_id"]] == 1.0) == bool(valid), (episode["case_id"], prediction)
