"""The bench results, exports and rescoring as library calls: typed results, checks first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agent_backtest as abt
from tests.bench.results_runs import manifest, tau_episodes, write_run


@pytest.fixture(scope="module")
def tau_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tasks 0–4 of the recorded GPT-4o trajectories as a finished bench run."""
    return write_run(tmp_path_factory.mktemp("bench") / "run", tau_episodes(range(5)))


def test_bench_report_writes_the_files_it_returns(tau_run: Path) -> None:
    report = abt.bench_report(tau_run)
    assert report.files.summary == tau_run / "summary.json"
    assert report.summary.counts.episodes == 20
    written = json.loads(report.files.summary.read_text(encoding="utf-8"))
    assert written["counts"]["passed"] == report.summary.counts.passed
    assert len(report.files.csv.read_text(encoding="utf-8").splitlines()) == 21
    assert report.files.page.read_text(encoding="utf-8").startswith("<!doctype html>")


def test_bench_report_refuses_a_running_run_unless_allowed(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", tau_episodes(range(2)), manifest(status="running"))
    with pytest.raises(abt.UserError) as caught:
        abt.bench_report(run)
    assert caught.value.parameter == "allow_partial"
    assert not (run / "summary.json").exists()
    assert abt.bench_report(run, allow_partial=True).summary.counts.episodes == 8


def test_bench_export_returns_what_each_file_holds(tau_run: Path, tmp_path: Path) -> None:
    outcome = abt.bench_export(tau_run, sft=tmp_path / "sft.jsonl", rl=tmp_path / "rl.jsonl")
    assert outcome.sft is not None and outcome.rl is not None
    sft_rows = (tmp_path / "sft.jsonl").read_text(encoding="utf-8").splitlines()
    assert outcome.sft.rows == len(sft_rows) > 0
    assert outcome.sft.meta == tmp_path / "sft.jsonl.meta.json"
    assert outcome.rl.meta.is_file()
    assert len(outcome.eligibility) == 20


@pytest.mark.parametrize("min_reward", [-0.1, 1.5])
def test_bench_export_checks_min_reward_before_writing(
    tau_run: Path, tmp_path: Path, min_reward: float
) -> None:
    with pytest.raises(abt.UserError) as caught:
        abt.bench_export(tau_run, sft=tmp_path / "sft.jsonl", min_reward=min_reward)
    assert caught.value.parameter == "min_reward"
    assert list(tmp_path.iterdir()) == []


def test_bench_export_needs_an_output(tau_run: Path) -> None:
    with pytest.raises(abt.UserError) as caught:
        abt.bench_export(tau_run)
    assert caught.value.parameter == "sft"


def test_bench_rescore_recomputes_the_recorded_rewards(tau_trajectories: Path) -> None:
    rescoring = abt.bench_rescore(tau_trajectories, env="tau_airline")
    assert len(rescoring.episodes) == 100
    assert rescoring.disagreements == []
    assert sorted(rescoring.pass_hat_k) == [1, 2, 3, 4]


def test_bench_rescore_checks_the_environment_before_the_file(tmp_path: Path) -> None:
    with pytest.raises(abt.UserError) as caught:
        abt.bench_rescore(tmp_path / "missing.json", env="no_such_env")
    assert caught.value.parameter == "env"
