"""Rescoring recorded τ-bench trajectories reproduces their rewards and τ-bench's pass^k."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.bench.rescore import RescoredEpisode, pass_hat_k, rescore
from agent_backtest.errors import InputError, UserError
from tests.conftest import FIXTURES

REWARDS = FIXTURES / "tau_airline" / "gpt-4o-airline-rewards.json"


def test_every_recomputed_reward_is_the_recorded_one(tau_trajectories: Path) -> None:
    result = rescore(tau_trajectories, "tau_airline")
    assert len(result.episodes) == 100
    assert result.disagreements == []
    assert sum(episode.reward for episode in result.episodes) == 31
    assert round(result.pass_hat_k[1].mean or 0, 3) == 0.31
    assert sorted(result.pass_hat_k) == [1, 2, 3, 4]
    assert all(estimate.n == 25 for estimate in result.pass_hat_k.values())


def test_pass_hat_k_of_the_published_gpt4o_episodes() -> None:
    rows = json.loads(REWARDS.read_text())
    episodes = [
        RescoredEpisode(str(row["task_id"]), row["trial"], row["reward"], row["reward"], True)
        for row in rows
    ]
    figures = pass_hat_k(episodes)
    assert {estimate.n for estimate in figures.values()} == {50}
    assert [round(figures[k].mean or 0, 3) for k in (1, 2, 3, 4)] == [0.420, 0.273, 0.220, 0.200]
    assert all(
        f.low is not None and f.low < (f.mean or 0) < (f.high or 0) for f in figures.values()
    )


def trajectories(source: Path) -> list[dict[str, Any]]:
    return json.loads(source.read_text())


def write(path: Path, items: Any) -> Path:
    path.write_text(json.dumps(items))
    return path


def test_an_episode_that_never_ended_gets_zero(tau_trajectories: Path, tmp_path: Path) -> None:
    items = trajectories(tau_trajectories)
    solved = next(
        item for item in items if item["reward"] == 1.0 and not item["info"]["task"]["outputs"]
    )
    assert "###STOP###" in solved["traj"][-1]["content"]
    unfinished = {**solved, "traj": solved["traj"][:-1]}
    result = rescore(write(tmp_path / "t.json", [solved, unfinished]), "tau_airline")
    finished, cut = result.episodes
    assert (finished.reward, finished.ended) == (1.0, True)
    assert (cut.reward, cut.ended) == (0.0, False)
    assert cut.components == {"final_state": 1.0, "outputs": 1.0}
    assert "never ended" in cut.reasons["ended"]
    assert result.disagreements == [cut]


def test_a_different_tool_call_changes_the_reward(tau_trajectories: Path, tmp_path: Path) -> None:
    items = trajectories(tau_trajectories)
    solved = next(
        item
        for item in items
        if item["reward"] == 1.0
        and any(
            m.get("tool_calls") and m["tool_calls"][0]["function"]["name"] == "book_reservation"
            for m in item["traj"]
        )
    )
    for message in solved["traj"]:
        calls = message.get("tool_calls")
        if calls and calls[0]["function"]["name"] == "book_reservation":
            arguments = json.loads(calls[0]["function"]["arguments"])
            arguments["insurance"] = "no" if arguments["insurance"] == "yes" else "yes"
            calls[0]["function"]["arguments"] = json.dumps(arguments)
    (episode,) = rescore(write(tmp_path / "t.json", [solved]), "tau_airline").episodes
    assert (episode.reward, episode.recorded_reward) == (0.0, 1.0)
    assert episode.components["final_state"] == 0.0


@pytest.mark.parametrize(
    ("items", "location"),
    [
        ({"task_id": 0}, "$"),
        ([{"task_id": 0, "trial": 0, "traj": []}], "$[0].info.task"),
        ([{"task_id": 0, "trial": 0, "traj": "no", "info": {"task": {}}}], "$[0].traj"),
        ([{"task_id": 0, "trial": "a", "traj": [], "info": {"task": {}}}], "$[0].trial"),
        ([{"trial": 0, "traj": [], "info": {"task": {}}}], "$[0]"),
        (
            [{"task_id": 0, "trial": 0, "traj": [], "info": {"task": {"actions": [1]}}}],
            "$[0].info.task.actions",
        ),
        (
            [{"task_id": 0, "trial": 0, "traj": [], "info": {"task": {"instruction": 7}}}],
            "$[0].info.task.instruction",
        ),
        (
            [
                {
                    "task_id": 0,
                    "trial": 0,
                    "info": {"task": {}},
                    "traj": [{"role": "assistant", "tool_calls": {"function": {}}}],
                }
            ],
            "$[0].traj[0].tool_calls",
        ),
        (
            [
                {
                    "task_id": 0,
                    "trial": 0,
                    "info": {"task": {}},
                    "traj": [
                        {
                            "role": "assistant",
                            "tool_calls": [{"function": {"name": "think", "arguments": "{"}}],
                        }
                    ],
                }
            ],
            "$[0].traj[0].tool_calls[0].function.arguments",
        ),
    ],
)
def test_a_malformed_file_names_the_place(items: Any, location: str, tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        rescore(write(tmp_path / "bad.json", items), "tau_airline")
    assert caught.value.location == location


def test_an_unknown_environment_names_the_env_parameter(tau_trajectories: Path) -> None:
    with pytest.raises(UserError) as caught:
        rescore(tau_trajectories, "retail")
    assert caught.value.parameter == "env"
