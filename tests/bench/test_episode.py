"""The episode rules, and engineering errors as their own outcome, through ``abt bench run``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.bench.conftest import STOP, abt, call, lines, scripted, write_benchmark, write_config
from tests.fake_openai import FakeOpenAI

Reply = Callable[[dict[str, Any]], str | dict[str, Any]]


def bench(
    tmp_path: Path, reply: Reply, *extra: object, benchmark: Path | None = None, **server: Any
) -> tuple[int, str, list[dict[str, Any]], list[dict[str, Any]], FakeOpenAI]:
    """Run the shop benchmark (or ``benchmark``) with ``reply`` as every model: (exit code,
    output, episodes, grades, server)."""
    benchmark = benchmark or write_benchmark(tmp_path / "shop")
    out = tmp_path / "run"
    with FakeOpenAI(reply=reply, **server) as fake:
        config = write_config(tmp_path / "abt.toml", fake=fake.base_url)
        code, output = abt(
            "bench", "run", benchmark, "--agent", "fake/agent-1", "--user", "scripted",
            "--out", out, "--config", config, "--no-cache", "--max-retries", "0", *extra,
        )  # fmt: skip
    grades = lines(out / "grades.jsonl") if (out / "grades.jsonl").exists() else []
    return code, output, lines(out / "episodes.jsonl"), grades, fake


def two_calls_at_once(body: dict[str, Any]) -> str | dict[str, Any]:
    """An agent asking for the look-up and the order in one answer, then confirming."""
    if any(m["role"] == "tool" for m in body["messages"]):
        return "Done."
    message = call("lookup", {"item": "apple"}, "call-1")
    message["tool_calls"] += call("order", {"item": "apple", "quantity": 2}, "call-2")["tool_calls"]
    return message


@pytest.mark.parametrize("first_only", [True, False])
def test_only_the_first_tool_call_of_a_turn_runs_under_the_rule(
    tmp_path: Path, first_only: bool
) -> None:
    benchmark = write_benchmark(tmp_path / "shop", cases=1)
    manifest = json.loads((benchmark / "manifest.json").read_text())
    manifest["rules"]["first_tool_call_only"] = first_only
    (benchmark / "manifest.json").write_text(json.dumps(manifest))
    code, output, episodes, grades, _ = bench(tmp_path, two_calls_at_once, benchmark=benchmark)
    assert code == 0, output
    assert episodes[0]["tool_calls"] == (1 if first_only else 2)
    trace = json.loads((tmp_path / "run" / episodes[0]["trace"]).read_text())
    ran = [m for m in trace["metadata"]["transcript"] if m.get("tool_calls")]
    assert len(ran[0]["tool_calls"]) == (1 if first_only else 2)
    # the trace keeps the model's answer as it came: both calls
    first_llm = trace["turns"][0]["steps"][0]
    assert len(first_llm["llm"]["response"]["message"]["tool_calls"]) == 2
    assert grades[0]["components"]["tests.bench.shop:ordered_grader"] == (
        0.0 if first_only else 1.0
    )


def test_a_tool_that_ends_the_episode_ends_it(tmp_path: Path) -> None:
    def transfer(body: dict[str, Any]) -> str | dict[str, Any]:
        return call("transfer_to_human", {}, "call-t")

    code, output, episodes, grades, _ = bench(tmp_path, transfer)
    assert code == 0, output
    assert {e["ended_by"] for e in episodes} == {"terminal_tool"}
    assert all(e["steps"] == 1 and e["tool_calls"] == 1 for e in episodes)
    assert {g["reward"] for g in grades} == {0.0}  # graded: it ordered nothing


def test_an_episode_that_never_ends_gets_no_reward_after_max_steps(tmp_path: Path) -> None:
    def forever(body: dict[str, Any]) -> str | dict[str, Any]:
        return call("lookup", {"item": "apple"}, f"call-{len(body['messages'])}")

    benchmark = write_benchmark(tmp_path / "shop", max_steps=4)
    code, output, episodes, grades, fake = bench(tmp_path, forever, benchmark=benchmark)
    assert code == 0, output
    assert {(e["ended_by"], e["steps"]) for e in episodes} == {("step_limit", 4)}
    assert all(
        g["reward"] == 0.0 and g["components"] == {} and "ended" in g["reasons"] for g in grades
    )
    assert fake.total == 3 * 4


def test_a_failing_model_is_an_engineering_error_left_out_of_the_mean(tmp_path: Path) -> None:
    benchmark = write_benchmark(tmp_path / "shop")
    rows = lines(benchmark / "cases.jsonl")
    rows[1]["metadata"]["user_turns"] = ["apples for the broken endpoint"]
    (benchmark / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    with FakeOpenAI(reply=scripted) as fake:
        fake.faults["apples for the broken endpoint"] = ["500"] * 10
        config = write_config(tmp_path / "abt.toml", fake=fake.base_url)
        out = tmp_path / "run"
        code, output = abt(
            "bench", "run", benchmark, "--agent", "fake/agent-1", "--user", "scripted",
            "--out", out, "--config", config, "--no-cache", "--max-retries", "1",
            "--rollouts", "2",
        )  # fmt: skip
    assert code == 0, output
    episodes, grades = lines(out / "episodes.jsonl"), lines(out / "grades.jsonl")
    broken = [e for e in episodes if e["case_id"] == "c01"]
    assert all(e["ended_by"] == "error" and e["error"]["kind"] == "model_http_5xx" for e in broken)
    assert all(g["reward"] is None for g in grades if g["case_id"] == "c01")
    assert all(g["reward"] == 1.0 for g in grades if g["case_id"] != "c01")
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["status"] == "completed_with_errors"
    assert manifest["errors"] == {"model_http_5xx": 2}
    assert "model_http_5xx 2" in output
    # the mean is over the 4 graded episodes of 2 cases, not a zero for the broken ones

    assert "mean reward 1.000" in output and "(4 episodes, 2 cases)" in output


def test_every_episode_failing_fails_the_run(tmp_path: Path) -> None:
    with FakeOpenAI(reply=scripted) as fake:
        fake.faults["I would like to buy 2 apples, please."] = ["500"] * 10
        config = write_config(tmp_path / "abt.toml", fake=fake.base_url)
        out = tmp_path / "run"
        code, output = abt(
            "bench", "run", write_benchmark(tmp_path / "shop"), "--agent", "fake/agent-1",
            "--user", "scripted", "--out", out, "--config", config, "--no-cache",
            "--max-retries", "0",
        )  # fmt: skip
    assert code == 1
    assert json.loads((out / "run.json").read_text())["status"] == "failed"
    assert "mean reward n/a (0 episodes, 0 cases)" in output


def test_an_environment_that_raises_is_an_engineering_error(tmp_path: Path) -> None:
    benchmark = write_benchmark(tmp_path / "shop", environment="tests.bench.shop:BrokenShop")
    code, output, episodes, grades, _ = bench(tmp_path, scripted, benchmark=benchmark)
    assert code == 1, output
    assert {e["error"]["kind"] for e in episodes} == {"environment_error"}
    assert "the order database is down" in episodes[0]["error"]["detail"]
    assert {g["reward"] for g in grades} == {None}


def test_an_episode_past_its_time_is_an_engineering_error(tmp_path: Path) -> None:
    code, output, episodes, grades, _ = bench(
        tmp_path, scripted, "--episode-timeout", "0.3", latency=0.2
    )
    assert code == 1, output
    assert {e["error"]["kind"] for e in episodes} == {"episode_timeout"}
    assert all((tmp_path / "run" / e["trace"]).is_file() for e in episodes)
    assert {g["reward"] for g in grades} == {None}


def test_a_case_of_opening_messages_ends_with_the_agents_answer(tmp_path: Path) -> None:
    benchmark = write_benchmark(tmp_path / "shop", cases=1)
    opening = {"id": "c00", "messages": [{"role": "user", "content": "Buy 2 apples."}]}
    (benchmark / "cases.jsonl").write_text(json.dumps(opening) + "\n")
    code, output, episodes, grades, _ = bench(tmp_path, scripted, benchmark=benchmark)
    assert code == 0, output
    assert episodes[0]["ended_by"] == "answer" and episodes[0]["steps"] == 3
    assert grades[0]["reward"] == 1.0


def test_the_simulated_user_plays_the_instruction_and_sees_no_tool_call(tmp_path: Path) -> None:
    benchmark = write_benchmark(tmp_path / "shop", cases=1)
    with FakeOpenAI(reply=scripted) as fake:
        config = write_config(tmp_path / "abt.toml", fake=fake.base_url)
        code, output = abt(
            "bench", "run", benchmark, "--agent", "fake/agent-1", "--user", "fake/user-1",
            "--out", tmp_path / "run", "--config", config, "--no-cache",
        )  # fmt: skip
    assert code == 0, output
    users = [b for b in fake.bodies if b["model"] == "user-1"]
    assert len(users) == 2
    assert all("You want 2 apples." in b["messages"][0]["content"] for b in users)
    assert all(STOP in b["messages"][0]["content"] and not b.get("tools") for b in users)
    assert not any(m.get("tool_calls") or m["role"] == "tool" for b in users for m in b["messages"])
    # the agent's reply reaches the user as the other party's words
    assert users[1]["messages"][-1] == {
        "role": "user",
        "content": "Your order of 2 apples is placed.",
    }
    (episode,) = lines(tmp_path / "run" / "episodes.jsonl")
    assert episode["ended_by"] == "stop_marker" and episode["model_calls"] == 3


def test_the_agents_text_answer_stays_in_the_conversation_it_is_asked_next(
    tmp_path: Path,
) -> None:
    benchmark = write_benchmark(tmp_path / "shop", cases=1)
    case = json.loads((benchmark / "cases.jsonl").read_text())
    case["metadata"]["user_turns"] = ["Buy 2 apples.", "And when will they arrive?"]
    (benchmark / "cases.jsonl").write_text(json.dumps(case) + "\n")
    code, output, episodes, _, fake = bench(tmp_path, scripted, benchmark=benchmark)
    assert code == 0, output
    agent = [b for b in fake.bodies if b.get("tools")]
    assert agent[-1]["messages"][-2:] == [
        {"role": "assistant", "content": "Your order of 2 apples is placed."},
        {"role": "user", "content": "And when will they arrive?"},
    ]
    assert episodes[0]["ended_by"] == "stop_marker"
