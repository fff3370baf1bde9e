"""The checks a bench run's plan makes before anything is written or sent."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from agent_backtest.bench.benchmark import Benchmark
from agent_backtest.bench.environment import Environment
from agent_backtest.bench.environments import environment_factory
from agent_backtest.bench.grading import JUDGED
from agent_backtest.bench.models import Case
from agent_backtest.bench.run_manifest import MANIFEST_FILE
from agent_backtest.bench.users import user_prompt
from agent_backtest.errors import UserError
from agent_backtest.providers import ModelConfig
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.families import JudgeError, check_judge
from agent_backtest.providers.roles import check_role
from agent_backtest.runs.manifest import code_version
from agent_backtest.trace import sha256_of


def check_out(out: Path) -> None:
    """The output directory is new or empty."""
    if out.exists() and not out.is_dir():
        raise UserError(f"{out} is a file, not a directory: name another --out", "out")
    if out.is_dir() and any(out.iterdir()):
        hint = f"finish it with --resume {out}, or " if (out / MANIFEST_FILE).exists() else ""
        raise UserError(f"{out} is not empty: {hint}name a new or empty directory", "out")


def check_git_commit() -> str | None:
    """``GIT_COMMIT`` when set; refused when it is not the checkout's commit."""
    given = os.environ.get("GIT_COMMIT", "").strip()
    if not given:
        return None
    version = code_version()
    if version.startswith("git:"):
        commit = version.removeprefix("git:").removesuffix("+dirty")
        if not commit.startswith(given.lower()):
            raise UserError(
                f"GIT_COMMIT is {given}, but this checkout is at {commit}: check out "
                "that commit, or unset GIT_COMMIT"
            )
    return given


def check_rollouts(rollouts: int, concurrency: int, episode_timeout: float) -> None:
    """Episodes per case and at once are at least 1; an episode has some time."""
    for name, value in (("rollouts", rollouts), ("concurrency", concurrency)):
        if value < 1:
            raise UserError(f"must be at least 1, got {value}", name)
    if episode_timeout <= 0:
        raise UserError(f"must be above 0, got {episode_timeout}", "episode_timeout")


def environment_factories(
    benchmark: Benchmark, cases: Sequence[Case]
) -> dict[str, Callable[[], Environment]]:
    """A factory per environment the cases run in, each imported now."""
    names = sorted({benchmark.environment_of(case) for case in cases})
    return {name: environment_factory(name, "benchmark") for name in names}


def policy_revision(make: Callable[[], Environment], name: str) -> str:
    """sha256 of what the agent is given by an environment (its policy and tools); making one
    now also shows that it can be made."""
    try:
        environment = make()
        material = {"policy": environment.policy(), "tools": environment.tools()}
    except Exception as exc:
        raise UserError(
            f"environment {name!r} cannot be made: {type(exc).__name__}: {exc}", "benchmark"
        ) from None
    return sha256_of(material)


def check_user(
    benchmark: Benchmark,
    cases: Sequence[Case],
    roles: dict[str, ModelRole],
    scripted_user: bool,
    prompt: str | None,
) -> str | None:
    """A user for every case that is played with one, and the simulated user's prompt: the
    name given, else the benchmark's own; None without a simulated user."""
    played = next((c.id for c in cases if c.instruction is not None and not c.messages), None)
    if played is not None and "user" not in roles and not scripted_user:
        raise UserError(
            f"case {played} of {benchmark.manifest.name} is played with a user: name the user's "
            "model (provider/model), or scripted",
            "user",
        )
    if "user" not in roles:
        if prompt is not None:
            raise UserError(
                "sets the simulated user's prompt, and this run has no simulated user: name the "
                "user's model, or leave the prompt out",
                "user_prompt",
            )
        return None
    stop_marker = benchmark.manifest.rules.stop_marker
    if prompt is not None:
        return user_prompt(prompt, stop_marker).name
    # the manifest's own choice: a mistake there is the benchmark's
    return user_prompt(benchmark.manifest.user_prompt, stop_marker, "benchmark").name


def check_roles(roles: dict[str, ModelRole], config: ModelConfig, graders: list[str]) -> None:
    """Every role the run needs is there and reachable; the judge grades no model of its own."""
    judge = roles.get("judge")
    if judge is None and JUDGED & set(graders):
        raise UserError("the benchmark grades rubric items: name a judge model", "judge")
    for role in roles.values():
        check_role(role, [role.ref], config)
    if judge is not None:
        try:
            check_judge(judge.model, [roles["agent"].model])
        except JudgeError as exc:
            raise UserError(str(exc), "judge") from None
