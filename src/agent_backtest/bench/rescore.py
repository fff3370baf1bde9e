"""Rescoring recorded τ-bench trajectories: their rewards recomputed here, with no model call.

Each trajectory's executed tool calls (the first tool call of each assistant turn, the one whose
result follows it) are run again on a fresh environment, and the episode is graded against the
task embedded in the file (``info.task``: gold actions and outputs) by the same final-state and
outputs graders a bench run uses. An episode that never ended (no ``###STOP###`` from the user,
no ending tool: it ran out of steps) gets 0, as τ-bench gives it. The result holds each
episode's reward beside the recorded one, and pass^k for every k up to the trials per task.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agent_backtest.bench.environment import Environment
from agent_backtest.bench.environments import environment_factory
from agent_backtest.bench.graders import Component, final_state, outputs
from agent_backtest.bench.models import Case, Gold, GoldAction
from agent_backtest.errors import InputError
from agent_backtest.formats.tau_bench import load_trajectories
from agent_backtest.reporting.passk import over_cases
from agent_backtest.statistics import Estimate

__all__ = ["STOP_MARKER", "RescoredEpisode", "Rescoring", "pass_hat_k", "rescore"]

STOP_MARKER = "###STOP###"


@dataclass(frozen=True)
class RescoredEpisode:
    """One trajectory's reward, recomputed, beside the one its file records."""

    task: str
    trial: int
    reward: float
    recorded_reward: float | None
    ended: bool
    components: dict[str, float | None] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)

    @property
    def agrees(self) -> bool:
        """Whether the recomputed reward is the recorded one."""
        return self.recorded_reward is not None and self.reward == self.recorded_reward


@dataclass(frozen=True)
class Rescoring:
    """Every episode of a trajectory file, rescored, and pass^k over its tasks."""

    episodes: list[RescoredEpisode]
    pass_hat_k: dict[int, Estimate]

    @property
    def disagreements(self) -> list[RescoredEpisode]:
        """The episodes whose recomputed reward is not the recorded one."""
        return [episode for episode in self.episodes if not episode.agrees]


def rescore(trajectories: str | Path, env: str) -> Rescoring:
    """Recompute the reward of every trajectory in a τ-bench trajectory file, each replayed on
    a fresh environment ``env`` (a shipped name such as ``tau_airline``, or module:Class)."""
    path = Path(trajectories)
    new_environment = environment_factory(env, "env")
    episodes = [
        _rescore_one(item, path, f"$[{index}]", new_environment)
        for index, item in enumerate(load_trajectories(path))
    ]
    return Rescoring(episodes, pass_hat_k(episodes))


def pass_hat_k(episodes: list[RescoredEpisode]) -> dict[int, Estimate]:
    """pass^k over tasks for k = 1 … the most trials any task has."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for episode in episodes:
        counts[episode.task][0] += episode.reward == 1.0
        counts[episode.task][1] += 1
    trials = max((n for _, n in counts.values()), default=0)
    tasks = {task: (c, n) for task, (c, n) in counts.items()}
    return {k: over_cases(tasks, k) for k in range(1, trials + 1)}


def _rescore_one(
    item: Any, path: Path, location: str, new_environment: Callable[[], Environment]
) -> RescoredEpisode:
    """One trajectory replayed on a fresh environment and graded against its embedded task."""
    trajectory = _Trajectory.parse(item, path, location)
    environment = new_environment()
    environment.reset(trajectory.case)
    for name, arguments in trajectory.tool_calls:
        environment.call(name, arguments)
    ended = trajectory.stopped or environment.done
    case, gold = trajectory.case, trajectory.gold
    components = {
        "final_state": final_state.judge(environment.state_hash(), case, gold, new_environment),
        "outputs": outputs.judge(gold.outputs, trajectory.messages),
    }
    return RescoredEpisode(
        task=case.id,
        trial=trajectory.trial,
        reward=_reward(components, ended),
        recorded_reward=trajectory.recorded_reward,
        ended=ended,
        components={name: component.value for name, component in components.items()},
        reasons=_reasons(components, ended),
    )


def _reward(components: dict[str, Component], ended: bool) -> float:
    """τ-bench's reward: 1 when the episode ended and every component gave 1, else 0."""
    return 1.0 if ended and all(c.value == 1.0 for c in components.values()) else 0.0


def _reasons(components: dict[str, Component], ended: bool) -> dict[str, str]:
    reasons = {name: c.reason for name, c in components.items() if c.reason}
    if not ended:
        reasons["ended"] = f"the episode never ended (no {STOP_MARKER}, no ending tool): reward 0"
    return reasons


@dataclass(frozen=True)
class _Trajectory:
    """One item of a τ-bench trajectory file, checked and in this project's terms."""

    case: Case
    gold: Gold
    trial: int
    recorded_reward: float | None
    messages: list[dict[str, Any]]
    tool_calls: list[tuple[str, dict[str, Any]]]
    stopped: bool

    @classmethod
    def parse(cls, item: Any, path: Path, location: str) -> _Trajectory:
        """The trajectory, or an :class:`InputError` naming what is missing where."""
        if not isinstance(item, dict):
            raise InputError(path, location, "a trajectory must be an object {task_id, trial, …}")
        messages = item.get("traj")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise InputError(path, f"{location}.traj", "traj must be a list of chat messages")
        if "task_id" not in item:
            raise InputError(path, location, "no task_id")
        task = _task(item, path, location)
        case_id = str(item["task_id"])
        trial = item.get("trial")
        if not isinstance(trial, int) or isinstance(trial, bool):
            raise InputError(path, f"{location}.trial", "trial must be an integer")
        reward = item.get("reward")
        return cls(
            case=Case(
                id=case_id,
                instruction=task.get("instruction"),
                metadata={"user_id": task.get("user_id")},
            ),
            gold=_gold(case_id, task, path, location),
            trial=trial,
            recorded_reward=float(reward) if isinstance(reward, int | float) else None,
            messages=messages,
            tool_calls=_tool_calls(messages, path, f"{location}.traj"),
            stopped=any(
                m.get("role") == "user" and STOP_MARKER in str(m.get("content")) for m in messages
            ),
        )


def _task(item: dict[str, Any], path: Path, location: str) -> dict[str, Any]:
    info = item.get("info")
    task = info.get("task") if isinstance(info, dict) else None
    if not isinstance(task, dict):
        raise InputError(
            path, f"{location}.info.task", "no embedded task: a τ-bench trajectory has info.task"
        )
    if not isinstance(task.get("instruction", ""), str):
        raise InputError(path, f"{location}.info.task.instruction", "instruction must be text")
    return task


def _gold(case_id: str, task: dict[str, Any], path: Path, location: str) -> Gold:
    actions, said = task.get("actions", []), task.get("outputs", [])
    where = f"{location}.info.task"
    if not isinstance(actions, list) or not all(
        isinstance(a, dict)
        and isinstance(a.get("name"), str)
        and isinstance(a.get("kwargs", {}), dict)
        for a in actions
    ):
        raise InputError(path, f"{where}.actions", "actions must be a list of {name, kwargs}")
    if not isinstance(said, list) or not all(isinstance(s, str) for s in said):
        raise InputError(path, f"{where}.outputs", "outputs must be a list of strings")
    return Gold(
        case_id=case_id,
        actions=[GoldAction(name=a["name"], arguments=a.get("kwargs", {})) for a in actions],
        outputs=said,
    )


def _tool_calls(
    messages: list[dict[str, Any]], path: Path, location: str
) -> list[tuple[str, dict[str, Any]]]:
    """The first tool call of each assistant message: the one τ-bench ran."""
    calls = []
    for index, message in enumerate(messages):
        tool_calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if not tool_calls:
            continue
        if not isinstance(tool_calls, list):
            raise InputError(path, f"{location}[{index}].tool_calls", "tool_calls must be a list")
        where = f"{location}[{index}].tool_calls[0].function"
        function = tool_calls[0].get("function") if isinstance(tool_calls[0], dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise InputError(path, where, "a tool call needs function.name")
        calls.append((function["name"], _arguments(function.get("arguments"), path, where)))
    return calls


def _arguments(raw: Any, path: Path, location: str) -> dict[str, Any]:
    """A call's arguments: the JSON text τ-bench parsed (or an object already)."""
    if isinstance(raw, dict):
        return raw
    try:
        arguments = orjson.loads(raw) if isinstance(raw, str) else None
    except orjson.JSONDecodeError:
        arguments = None
    if not isinstance(arguments, dict):
        raise InputError(path, f"{location}.arguments", "arguments must be a JSON object")
    return arguments
