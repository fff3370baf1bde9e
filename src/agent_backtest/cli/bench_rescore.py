"""``abt bench rescore``: recompute the rewards of recorded τ-bench trajectories."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import typer

from agent_backtest import api
from agent_backtest.cli.options import INPUTS, OUTPUT, argument, option
from agent_backtest.cli.terminal import SafeConsole
from agent_backtest.reporting.figures import interval_fields, interval_label

if TYPE_CHECKING:
    from agent_backtest.api.bench_rescoring import Estimate, RescoredEpisode, Rescoring


Trajectories = argument(
    Path, "TRAJECTORIES", "A τ-bench trajectory file ([{task_id, trial, reward, info.task, traj}])."
)
Environment = option(
    str,
    "--env",
    INPUTS,
    "The environment the trajectories ran in: tau_airline, or module:Class.",
    metavar="NAME",
    show_default=False,
)
RescoringJson = option(
    bool, "--json", OUTPUT, "Print pass^k and every episode's rewards as one JSON object."
)


def rescore(
    trajectories: Trajectories,
    env: Environment,
    as_json: RescoringJson = False,
) -> None:
    """Recompute the rewards of recorded τ-bench trajectories, with no model call: pass^k, and how
    many equal the recorded ones.

    Each episode's executed tool calls run again on a fresh environment, and the episode is
    graded against the task its file embeds (final state and outputs); one that never ended gets
    0, as in τ-bench.
    """
    result = api.bench_rescore(trajectories, env=env)
    if as_json:
        typer.echo(orjson.dumps(document(result), option=orjson.OPT_INDENT_2).decode())
    else:
        console = SafeConsole(highlight=False)
        for line in rescoring_lines(result, env):
            console.print(line, markup=False)


def document(result: Rescoring) -> dict[str, Any]:
    """The rescoring as plain data: pass^k by k, the agreement count, every episode."""
    return {
        "pass_hat_k": {str(k): _estimate(estimate) for k, estimate in result.pass_hat_k.items()},
        "recorded_equal": len(result.episodes) - len(result.disagreements),
        "episodes": [dataclasses.asdict(episode) for episode in result.episodes],
    }


def rescoring_lines(result: Rescoring, env: str) -> list[str]:
    """pass^k with intervals (the first saying what they are), then the agreement with the
    recorded rewards and each exception."""
    episodes, unequal = len(result.episodes), result.disagreements
    tasks = len({episode.task for episode in result.episodes})
    lines = [f"{episodes} episodes of {tasks} tasks rescored on {env}"]
    for index, (k, estimate) in enumerate(result.pass_hat_k.items()):
        said = interval_label(estimate.n, "task") if index == 0 else f"({estimate.n} tasks)"
        lines.append(f"pass^{k} {_rate(estimate)} {said}")
    lines.append(
        f"recomputed rewards equal to the recorded ones: {episodes - len(unequal)} of {episodes}"
    )
    return lines + [f"  {_disagreement(episode)}" for episode in unequal]


def _rate(estimate: Estimate) -> str:
    if estimate.mean is None:
        return "n/a"
    if estimate.low is None or estimate.high is None:
        return f"{estimate.mean:.3f} (no interval: 1 task)"
    return f"{estimate.mean:.3f} [{estimate.low:.3f}, {estimate.high:.3f}]"


def _disagreement(episode: RescoredEpisode) -> str:
    recorded = "none" if episode.recorded_reward is None else f"{episode.recorded_reward:g}"
    why = "; ".join(f"{name}: {reason}" for name, reason in episode.reasons.items())
    line = f"task {episode.task} trial {episode.trial}: {episode.reward:g}, recorded {recorded}"
    return f"{line} ({why})" if why else line


def _estimate(estimate: Estimate) -> dict[str, Any]:
    return {
        "mean": estimate.mean,
        "low": estimate.low,
        "high": estimate.high,
        "se": estimate.se,
        "tasks": estimate.n,
        **interval_fields(estimate.clusters, "task"),
    }
