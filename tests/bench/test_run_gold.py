"""The gold never reaches the agent's side: not a request, not the environment, not a trace."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench.conftest import GOLD_MARKS, abt, lines, scripted, write_benchmark, write_config
from tests.bench.shop import SpyShop
from tests.fake_openai import FakeOpenAI


def test_no_gold_string_reaches_a_request_the_environment_or_the_run_files(
    tmp_path: Path,
) -> None:
    benchmark = write_benchmark(
        tmp_path / "shop",
        environment="tests.bench.shop:SpyShop",
        graders=("tool_calls", "rubric"),
    )
    gold_text = (benchmark / "gold.jsonl").read_text()
    assert all(mark in gold_text for mark in GOLD_MARKS)
    SpyShop.seen.clear()
    with FakeOpenAI(reply=scripted) as models, FakeOpenAI(reply=scripted) as judge:
        config = write_config(tmp_path / "abt.toml", fake=models.base_url, grader=judge.base_url)
        out = tmp_path / "run"
        code, output = abt(
            "bench", "run", benchmark, "--agent", "fake/agent-1", "--user", "fake/user-1",
            "--judge", "grader/judge-1", "--out", out, "--config", config, "--rollouts", "2",
            "--no-cache",
        )  # fmt: skip
        assert code == 0, output
        agent_and_user = json.dumps(models.bodies)
        judged = json.dumps(judge.bodies)
    assert models.total == 6 * 3 + 6 * 2  # three agent calls and two user turns an episode
    rollout_files = [out / "episodes.jsonl", *sorted((out / "traces").iterdir())]
    places = {
        "agent and user requests": agent_and_user,
        "environment calls": "\n".join(SpyShop.seen),
        "output": output,
        **{str(path): path.read_text() for path in rollout_files},
    }
    for mark in GOLD_MARKS:
        for where, text in places.items():
            assert mark not in text, f"{mark} reached {where}"
    assert any(line.startswith("call order") for line in SpyShop.seen)
    # the gold was used, after the rollouts: the judge was asked its rubric item
    assert GOLD_MARKS[1] in judged
    counts = json.loads((out / "run.json").read_text())["counts"]
    assert {role: c["calls"] for role, c in counts.items()} == {"agent": 18, "user": 12, "judge": 6}
    grades = lines(out / "grades.jsonl")
    assert [g["components"] for g in grades] == [{"tool_calls": 1.0, "rubric": 1.0}] * 6


def test_the_agent_side_modules_import_neither_the_gold_reader_nor_grading() -> None:
    import ast

    package = Path(__file__).resolve().parents[2] / "src" / "agent_backtest" / "bench"
    for name in ("benchmark", "episode", "rollouts", "traces", "users"):
        tree = ast.parse((package / f"{name}.py").read_text(encoding="utf-8"))
        imported = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
        }
        assert not {"agent_backtest.bench.gold", "agent_backtest.bench.grading"} & imported, name
        assert not any(module.startswith("agent_backtest.bench.graders") for module in imported), (
            name
        )
