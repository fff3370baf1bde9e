"""A bench run's results: pass^k and pass@k, rewards, errors, costs, the CSV and the command."""

from __future__ import annotations

import csv
import json
import stat
from collections import defaultdict
from math import comb
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.bench.reading import read_run
from agent_backtest.bench.results import summarise, write_results
from agent_backtest.cli.app import app
from agent_backtest.errors import InputError, UserError
from agent_backtest.statistics import clustered_average, t_quantile
from tests.bench.results_runs import manifest, tau_episodes, trajectories, write_run
from tests.manifests import replay_manifest

runner = CliRunner()


def recorded_passk(k: int, at: bool = False) -> float:
    """pass^k (pass@k with ``at``) computed straight from the trajectories' recorded rewards."""
    by_task: dict[int, list[float]] = defaultdict(list)
    for item in trajectories():
        by_task[item["task_id"]].append(item["reward"])
    values = []
    for rewards in by_task.values():
        n, c = len(rewards), sum(r == 1.0 for r in rewards)
        values.append(1 - comb(n - c, k) / comb(n, k) if at else comb(c, k) / comb(n, k))
    return sum(values) / len(values)


@pytest.fixture(scope="module")
def tau_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 100 recorded GPT-4o trajectories as a finished bench run."""
    return write_run(tmp_path_factory.mktemp("bench") / "run", tau_episodes())


def test_pass_k_of_the_recorded_rewards_for_every_k(tau_run: Path) -> None:
    summary = summarise(read_run(tau_run))
    assert list(summary.pass_hat_k) == ["1", "2", "3", "4"]
    for k in range(1, 5):
        hat, at = summary.pass_hat_k[str(k)], summary.pass_at_k[str(k)]
        assert hat.mean == pytest.approx(recorded_passk(k))
        assert at.mean == pytest.approx(recorded_passk(k, at=True))
        assert hat.cases == at.cases == 25
        assert hat.ci95[0] < hat.mean < hat.ci95[1]
    assert summary.pass_hat_k["1"].mean == pytest.approx(0.31)
    counts = summary.counts
    assert (counts.episodes, counts.graded, counts.passed, counts.errors) == (100, 100, 31, 0)
    assert counts.rollouts_per_case == {"4": 25}
    assert summary.reward.mean == pytest.approx(0.31)
    assert (summary.reward.n, summary.reward.cases) == (100, 25)
    assert summary.warnings == []


def test_components_are_averaged_over_what_they_graded_and_missing_counts_stay_missing(
    tau_run: Path,
) -> None:
    summary = summarise(read_run(tau_run))
    recorded = [
        (item["info"].get("reward_info") or {}).get("info") or {} for item in trajectories()
    ]
    actions = [info["r_actions"] for info in recorded if "r_actions" in info]
    final_state = summary.components["final_state"]
    assert final_state.mean.n == len(actions) < 100
    assert final_state.not_graded == 100 - len(actions)
    assert final_state.mean.mean == pytest.approx(sum(actions) / len(actions))
    # the trajectories record no token counts: a mean over nothing is missing, not 0
    assert summary.per_episode["input_tokens"].mean is None
    assert summary.per_episode["input_tokens"].n == 0
    steps = [sum(m["role"] == "assistant" for m in item["traj"]) for item in trajectories()]
    assert summary.per_episode["model_calls"].mean == pytest.approx(sum(steps) / 100)


def test_tokens_are_averaged_over_the_episodes_that_recorded_them(tmp_path: Path) -> None:
    episodes = tau_episodes(range(3))
    counted = {0: 100, 5: 300}
    for index, tokens in counted.items():
        record = episodes[index].record.model_copy(update={"input_tokens": tokens})
        episodes[index] = type(episodes[index])(
            record, episodes[index].grade, episodes[index].session
        )
    summary = summarise(read_run(write_run(tmp_path / "run", episodes)))
    assert summary.per_episode["input_tokens"].mean == 200
    assert summary.per_episode["input_tokens"].n == 2


def test_engineering_errors_are_left_out_of_every_mean_and_counted_by_kind(tmp_path: Path) -> None:
    episodes = tau_episodes()
    # task 12 passed all four trials; an error in two of them must not turn them into failures
    failed = {
        ("12", 0): "model_timeout",
        ("12", 1): "model_timeout",
        ("3", 2): "environment_error",
    }
    episodes = [e.failed(failed[e.record.key]) if e.record.key in failed else e for e in episodes]
    summary = summarise(read_run(write_run(tmp_path / "run", episodes)))
    counts = summary.counts
    assert counts.errors_by_kind == {"environment_error": 1, "model_timeout": 2}
    assert (counts.errors, counts.graded) == (3, 97)
    assert counts.rollouts_per_case == {"2": 1, "3": 1, "4": 23}
    kept = [i["reward"] for i in trajectories() if (str(i["task_id"]), i["trial"]) not in failed]
    assert summary.reward.mean == pytest.approx(sum(kept) / 97)
    assert summary.reward.n == 97
    # task 12 keeps pass^2 = 1 from its two graded rollouts; pass^3 and pass^4 leave it out
    assert summary.pass_hat_k["2"].cases == 25
    assert summary.pass_hat_k["3"].cases == 24
    assert summary.pass_hat_k["4"].cases == 23
    assert any("unequal numbers of graded rollouts" in w for w in summary.warnings)
    assert any("3 episodes ended in an engineering error" in w for w in summary.warnings)


def test_a_grade_without_a_reward_is_an_error_and_an_episode_without_a_grade_is_not_graded(
    tmp_path: Path,
) -> None:
    episodes = tau_episodes(range(2))
    episodes[0] = episodes[0].rewarded(None)
    episodes[1] = episodes[1].ungraded()
    summary = summarise(read_run(write_run(tmp_path / "run", episodes)))
    assert summary.counts.errors_by_kind == {"grading_error": 1}
    assert summary.counts.ungraded == 1
    assert summary.counts.graded == 6
    assert any("1 episodes have no grade yet" in w for w in summary.warnings)


def test_a_torn_last_line_is_ignored_and_the_first_record_of_an_episode_kept(
    tmp_path: Path,
) -> None:
    episodes = tau_episodes(range(2))
    first = episodes[0].record
    again = first.model_copy(update={"seconds": 999.0}).model_dump_json(by_alias=True).encode()
    run = write_run(
        tmp_path / "run", episodes, tail=lambda text: text + again + b"\n" + b'{"schema": "abt.ep'
    )
    read = read_run(run)
    assert len(read.episodes) == 8
    assert read.episodes[0].seconds == first.seconds


def test_a_torn_line_inside_the_file_names_the_file_and_line(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", tau_episodes(range(1)), tail=lambda t: b"{torn\n" + t)
    with pytest.raises(InputError) as caught:
        read_run(run)
    assert "episodes.jsonl: line 1" in str(caught.value)


def test_files_are_written_private_and_the_csv_has_one_row_per_episode(tau_run: Path) -> None:
    summary = write_results(tau_run)
    for name in ("summary.json", "results.csv", "report.html"):
        assert stat.S_IMODE((tau_run / name).stat().st_mode) == 0o600
    document = json.loads((tau_run / "summary.json").read_text())
    assert document["schema"] == "abt.bench_summary/1"
    assert document["pass_hat_k"]["1"]["mean"] == summary.pass_hat_k["1"].mean
    assert document["per_episode"]["input_tokens"]["mean"] is None
    with (tau_run / "results.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 100
    assert {row["case_id"] for row in rows} == {str(t) for t in range(25)}
    assert sum(row["passed"] == "true" for row in rows) == 31
    assert "component.final_state" in rows[0]
    assert all(row["input_tokens"] == "" for row in rows)  # not recorded: empty, never 0


def test_csv_keeps_text_that_starts_like_a_formula_as_text(tmp_path: Path) -> None:
    episode = tau_episodes(range(1))[0].failed("environment_error")
    record = episode.record.model_copy(
        update={"error": episode.record.error.model_copy(update={"detail": "=HYPERLINK(1)"})}
    )
    run = write_run(tmp_path / "run", [type(episode)(record, episode.grade, episode.session)])
    write_results(run)
    with (run / "results.csv").open(newline="") as handle:
        row = next(csv.DictReader(handle))
    assert row["error_detail"] == "'=HYPERLINK(1)"
    assert row["reward"] == "" and row["error_kind"] == "environment_error"


def test_a_running_run_needs_allow_partial(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", tau_episodes(range(2)), manifest(status="running"))
    with pytest.raises(UserError) as caught:
        write_results(run)
    assert caught.value.parameter == "allow_partial"
    assert not (run / "summary.json").exists()
    summary = write_results(run, allow_partial=True)
    assert summary.counts.graded == 8
    assert summary.warnings[0].startswith("the run is running")


def test_clustered_average_is_the_mean_with_a_t_interval_of_its_clustered_se() -> None:
    values, clusters = [10.0, 12.0, 20.0, 22.0, 30.0], ["a", "a", "b", "b", "c"]
    estimate = clustered_average(values, clusters)
    mean = 94 / 5
    residuals = [10 + 12 - 2 * mean, 20 + 22 - 2 * mean, 30 - mean]
    se = (3 / 2 * sum(r * r for r in residuals)) ** 0.5 / 5
    assert estimate.mean == pytest.approx(mean)
    assert estimate.se == pytest.approx(se)
    assert estimate.low == pytest.approx(mean - t_quantile(2) * se)
    assert estimate.high == pytest.approx(mean + t_quantile(2) * se)
    assert clustered_average([5.0, 7.0], ["a", "a"]).low is None  # one cluster: no interval
    assert clustered_average([], []).mean is None


def test_the_command_writes_the_files_and_prints_every_k(tau_run: Path) -> None:
    result = runner.invoke(app, ["bench", "report", str(tau_run)], terminal_width=200)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        "tau_airline 2024.06 · completed · 100 episodes: 100 graded (of 25 cases)"
    )
    assert lines[1] == (
        "set up: user prompt abt (abt's simulated user) · agent sampling as the provider "
        "defaults · user sampling as the provider defaults"
    )
    assert lines[2].startswith("pass^1 0.310 [")
    assert lines[5].startswith("pass^4 0.160 [") and lines[5].endswith("25 cases")
    assert "input tokens not recorded" in result.stdout
    assert f"wrote {tau_run / 'summary.json'}" in result.stdout


@pytest.mark.parametrize(
    ("run_json", "message"),
    [
        (json.loads(replay_manifest("openai/m").model_dump_json(by_alias=True)), "'replay' is not"),
        (manifest(status="running"), "--allow-partial: "),
    ],
)
def test_bad_runs_end_with_one_line_and_exit_2(
    tmp_path: Path, run_json: dict, message: str
) -> None:
    run = write_run(tmp_path / "run", tau_episodes(range(1)), run_json)
    result = runner.invoke(app, ["bench", "report", str(run)], terminal_width=300)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (run / "summary.json").exists()


def test_a_folder_that_is_no_run_ends_with_one_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bench", "report", str(tmp_path)], terminal_width=300)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"abt: error: {tmp_path}: no run.json: not a bench run directory (abt bench run makes one)"
    )


def test_the_manifest_is_read_in_the_shape_abt_bench_run_writes(tmp_path: Path) -> None:
    written = manifest(
        status="completed_with_errors",
        code_version="git:abc123",
        git_commit=None,
        benchmark={**manifest()["benchmark"], "path": str(tmp_path / "gone"), "version": "1"},
        roles={"agent": {"name": "agent", "model": "local/smollm2", "timeout": 30}},
        rollout={**manifest()["rollout"], "base_seed": 7},
    )
    facts = read_run(write_run(tmp_path / "run", tau_episodes([0]), written)).facts
    assert facts.commit == "git:abc123"
    assert facts.base_seed == 7
    assert facts.models == {"agent": "local/smollm2"}
    assert (facts.benchmark, facts.release, facts.training_prohibited) == (
        "tau_airline",
        "test",
        False,
    )


def test_a_manifest_no_bench_run_wrote_is_refused_naming_its_field(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", tau_episodes([0]), manifest(future_field={"x": 1}))
    result = runner.invoke(app, ["bench", "report", str(run)], terminal_width=300)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"abt: error: {run / 'run.json'}: future_field: not a bench run manifest: "
        "Extra inputs are not permitted"
    )
