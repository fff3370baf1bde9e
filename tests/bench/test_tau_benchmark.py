"""The shipped τ-bench airline benchmark directory: manifest, 50 cases, their gold."""

from __future__ import annotations

import json
from pathlib import Path

from agent_backtest.bench.models import BenchmarkManifest, Case, Gold
from agent_backtest.bench.tau_airline import AirlineEnvironment, benchmark_directory


def read_lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_the_manifest_holds_taus_rules() -> None:
    directory = benchmark_directory()
    manifest = BenchmarkManifest.model_validate_json((directory / "manifest.json").read_text())
    assert (manifest.name, manifest.environment, manifest.release) == (
        "tau_airline",
        "tau_airline",
        "test",
    )
    assert not manifest.training_prohibited
    assert manifest.graders == ["final_state", "outputs"]
    rules = manifest.rules
    assert (rules.max_steps, rules.first_tool_call_only, rules.stop_marker) == (
        30,
        True,
        "###STOP###",
    )
    assert rules.reward_requires_end
    assert (directory / manifest.gold).is_file()


def test_fifty_cases_each_with_its_gold_and_no_gold_in_a_case() -> None:
    directory = benchmark_directory()
    cases = [Case.model_validate_json(line) for line in read_lines(directory / "cases.jsonl")]
    golds = [Gold.model_validate_json(line) for line in read_lines(directory / "gold.jsonl")]
    assert [case.id for case in cases] == [str(index) for index in range(50)]
    assert [gold.case_id for gold in golds] == [case.id for case in cases]
    case_text = (directory / "cases.jsonl").read_text()
    assert '"actions"' not in case_text and '"outputs"' not in case_text
    assert all(case.instruction and case.metadata["user_id"] for case in cases)


def test_the_gold_is_the_task_the_recorded_episodes_were_graded_with(
    tau_trajectories: Path,
) -> None:
    directory = benchmark_directory()
    golds = {
        gold.case_id: gold
        for gold in map(Gold.model_validate_json, read_lines(directory / "gold.jsonl"))
    }
    cases = {
        case.id: case
        for case in map(Case.model_validate_json, read_lines(directory / "cases.jsonl"))
    }
    for item in json.loads(tau_trajectories.read_text()):
        task, case_id = item["info"]["task"], str(item["task_id"])
        gold = golds[case_id]
        assert [{"name": a.name, "kwargs": a.arguments} for a in gold.actions] == task["actions"]
        assert gold.outputs == task["outputs"]
        assert cases[case_id].metadata["user_id"] == task["user_id"]


def test_every_gold_action_runs_without_a_refusal() -> None:
    for line in read_lines(benchmark_directory() / "gold.jsonl"):
        gold = Gold.model_validate_json(line)
        environment = AirlineEnvironment()
        for action in gold.actions:
            outcome = environment.call(action.name, action.arguments)
            assert not outcome.error, (gold.case_id, action.name, outcome.output)
