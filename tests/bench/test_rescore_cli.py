"""``abt bench rescore`` driven in-process: the text, the JSON, and mistakes as one line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agent_backtest.cli.app import app

runner = CliRunner()


def run(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, ["bench", "rescore", *(str(a) for a in args)])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_text_shows_pass_hat_k_with_intervals_and_the_agreement(tau_trajectories: Path) -> None:
    code, stdout, _ = run(tau_trajectories, "--env", "tau_airline")
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0] == "100 episodes of 25 tasks rescored on tau_airline"
    # the first interval printed says what it is; the others give their count
    assert lines[1].startswith("pass^1 0.310 [")
    assert lines[1].endswith("] 95% CI, clustered by task (25 tasks)")
    assert lines[2].endswith("] (25 tasks)")
    assert [line.split()[0] for line in lines[1:5]] == ["pass^1", "pass^2", "pass^3", "pass^4"]
    assert lines[5] == "recomputed rewards equal to the recorded ones: 100 of 100"
    assert len(lines) == 6


def test_text_lists_each_unequal_reward(tau_trajectories: Path, tmp_path: Path) -> None:
    items = json.loads(tau_trajectories.read_text())
    item = next(i for i in items if i["reward"] == 1.0 and not i["info"]["task"]["outputs"])
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps([{**item, "traj": item["traj"][:-1]}]))
    code, stdout, _ = run(cut, "--env", "tau_airline")
    assert code == 0
    assert "recomputed rewards equal to the recorded ones: 0 of 1" in stdout
    assert f"  task {item['task_id']} trial {item['trial']}: 0, recorded 1 (ended: " in stdout


def test_json_is_one_object_of_pass_hat_k_and_episodes(tau_trajectories: Path) -> None:
    code, stdout, _ = run(tau_trajectories, "--env", "tau_airline", "--json")
    assert code == 0
    document = json.loads(stdout)
    assert sorted(document["pass_hat_k"]) == ["1", "2", "3", "4"]
    first = document["pass_hat_k"]["1"]
    assert first["mean"] == 0.31 and first["tasks"] == 25
    assert first["low"] < first["mean"] < first["high"]
    # what the interval is: its level, its method, and the tasks it is clustered by
    assert (first["level"], first["method"]) == (0.95, "korn_graubard_clustered")
    assert (first["clusters"], first["clustered_by"]) == (25, "task")
    assert document["recorded_equal"] == 100
    episodes = document["episodes"]
    assert len(episodes) == 100
    assert {(e["task"], e["trial"]) for e in episodes} == {
        (str(task), trial) for task in range(25) for trial in range(4)
    }
    assert all(e["reward"] == e["recorded_reward"] for e in episodes)
    assert sum(e["reward"] for e in episodes) == 31


def test_a_file_that_is_not_trajectories_is_one_line(tau_tools: Path, tmp_path: Path) -> None:
    code, stdout, stderr = run(tau_tools, "--env", "tau_airline")
    assert (code, stdout) == (2, "")
    assert stderr.count("\n") == 1 and stderr.startswith(f"abt: error: {tau_tools}: $[0]")
    code, _, stderr = run(tmp_path / "missing.json", "--env", "tau_airline")
    assert code == 2 and "cannot open" in stderr and stderr.count("\n") == 1


def test_an_unknown_or_missing_env_is_a_usage_error(tau_trajectories: Path) -> None:
    code, _, stderr = run(tau_trajectories, "--env", "retail")
    assert code == 2
    assert stderr == (
        "abt: error: --env: unknown environment 'retail': name one of bfcl, tau_airline, "
        "or give your own as module:Class\n"
    )
    code, _, stderr = run(tau_trajectories)
    assert code == 2 and "Missing option '--env'" in stderr
