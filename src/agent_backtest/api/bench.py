"""``bench_run()`` and ``bench_resume()``: rollouts of an agent on a benchmark, then their grades.

Every check runs before the run directory is made (:func:`agent_backtest.bench.run.plan_run`);
the run's lock is held from the first write to the last, grading included.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from agent_backtest.api.options import (
    CallOptions,
    CaseOptions,
    ExecutorOptions,
    PathLike,
    RolloutOptions,
)
from agent_backtest.api.roles import Roles, given_roles
from agent_backtest.bench.benchmark import benchmark_path
from agent_backtest.bench.models import EpisodeRecord
from agent_backtest.bench.run import (
    BenchHooks,
    BenchOutcome,
    BenchPlan,
    execute,
    load_manifest,
    plan_run,
    prepare_resume,
    start_run,
)
from agent_backtest.bench.tally import tally
from agent_backtest.bench.users import SCRIPTED, USER_PROMPTS
from agent_backtest.errors import UserError
from agent_backtest.executors import RoleCalls, role_calls
from agent_backtest.providers import load_model_config
from agent_backtest.providers.config import ModelConfig, ModelRole, RoleName
from agent_backtest.providers.roles import RoleModel
from agent_backtest.runs.files import private_mkdir
from agent_backtest.runs.lock import run_lock

# The roles of a bench run: the agent under test, the simulated user, the judge of its graders.
BENCH_ROLES: tuple[RoleName, ...] = ("agent", "user", "judge")

__all__ = [
    "SCRIPTED",
    "USER_PROMPTS",
    "BenchHooks",
    "BenchOutcome",
    "EpisodeRecord",
    "bench_resume",
    "bench_run",
    "engineering_errors",
]


def bench_run(
    benchmark: PathLike,
    *,
    roles: Roles,
    out: PathLike,
    cases: CaseOptions | None = None,
    rollouts: RolloutOptions | None = None,
    calls: CallOptions | None = None,
    execution: ExecutorOptions | None = None,
    config_file: PathLike | None = None,
    user_prompt: str | None = None,
    hooks: BenchHooks | None = None,
) -> BenchOutcome:
    """Roll out ``agent`` on every chosen case of ``benchmark`` into the new run directory
    ``out``, then grade the episodes against the gold.

    ``benchmark`` is a benchmark directory, or a shipped benchmark's name (``tau_airline``).
    ``roles`` names the models: ``agent`` (the model under test) always, ``user`` for a
    benchmark whose cases are played with a user, and ``judge`` for one whose graders ask one;
    ``user`` may be ``"scripted"`` for a user that plays each case's ``metadata.user_turns``
    (else its instruction) and then the stop marker. The agent's and the user's sampling
    (temperature, top_p, max_tokens) are role settings: ``{"agent":
    RoleSettings(model=..., temperature=0.0)}`` or ``[roles.agent]`` of the config.
    ``user_prompt`` names the simulated user's system prompt: ``"tau"`` (τ-bench's user
    simulator) or ``"abt"``; by default the benchmark's own (tau_airline's is τ-bench's).
    ``calls`` sets how every role's calls are made (timeouts, retries, cache);
    ``execution`` where the agent's and the user's are made (here, or on Ray workers: the
    episodes, their environments and the gold stay in this process; a ``local/...`` model is
    loaded by every worker, from the same path). Nothing is written and nothing is sent until
    every check has passed; a failed check raises :class:`~agent_backtest.errors.UserError`
    naming the parameter at fault. ``hooks`` hears of the start, each episode as it is saved,
    and the grading.
    """
    models = given_roles(roles, BENCH_ROLES)
    if "agent" not in models:
        raise UserError("a bench run needs its agent role: roles={'agent': …}", "agent")
    calls, execution = calls or CallOptions(), execution or ExecutorOptions()
    execution.check()
    config = load_model_config(Path(config_file) if config_file else None)
    plan = plan_run(
        benchmark_path(benchmark),
        Path(out),
        _roles(models, calls, config),
        config,
        cases or CaseOptions(),
        rollouts or RolloutOptions(),
        str(Path(config_file).resolve()) if config_file else None,
        scripted_user=models.get("user") == SCRIPTED,
        user_prompt=user_prompt,
    )
    directory = plan.directory
    try:
        private_mkdir(directory)
        os.chmod(directory, 0o700)  # an empty folder given too: the run holds user utterances
    except OSError as exc:
        raise UserError(
            f"cannot make {directory} ({exc.strerror}): name another --out", "out"
        ) from None
    with run_lock(directory, "bench run"):
        start_run(plan)
        return execute(plan, set(), _calls_on(execution, plan), hooks, _loads(execution))


def bench_resume(
    run: PathLike,
    *,
    execution: ExecutorOptions | None = None,
    config_file: PathLike | None = None,
    hooks: BenchHooks | None = None,
) -> BenchOutcome:
    """Finish a bench run: run only the episodes with no record, then grade the run (again,
    with the gold as it is now); by either executor, whichever started it."""
    execution = execution or ExecutorOptions()
    execution.check()
    directory = Path(run)
    with run_lock(_existing(directory), "resume"):
        config_file = config_file or load_manifest(directory).config_file
        config = load_model_config(Path(config_file) if config_file else None)
        plan, done = prepare_resume(directory, config)
        return execute(plan, done, _calls_on(execution, plan), hooks, _loads(execution))


def engineering_errors(outcome: BenchOutcome) -> dict[str, int]:
    """How many of the outcome's episodes ended in each kind of engineering error (they get no
    reward and stay out of the means), by kind in name order."""
    return tally(outcome.records, outcome.grades).errors


def _calls_on(execution: ExecutorOptions, plan: BenchPlan) -> RoleCalls:
    """Each rollout role's calls made by its own executor of ``execution``'s kind; on Ray the
    roles share the cluster's CPUs, each worker holding its part of one."""
    rolling = [name for name in plan.manifest.roles if name != "judge"]
    return role_calls(execution.executor, execution.ray_address, plan.config, len(rolling))


def _loads(execution: ExecutorOptions) -> tuple[str, ...]:
    """The optional libraries the executor loads, for the run's provenance."""
    return ("ray",) if execution.executor == "ray" else ()


def _roles(
    models: Mapping[RoleName, RoleModel], calls: CallOptions, config: ModelConfig
) -> dict[str, ModelRole]:
    """The run's roles: agent; user unless scripted; judge when named."""
    return {
        name: calls.role(name, models[name], config)
        for name in BENCH_ROLES
        if name in models and not (name == "user" and models[name] == SCRIPTED)
    }


def _existing(directory: Path) -> Path:
    if not (directory / "run.json").is_file():
        raise UserError(f"{directory} holds no bench run (no run.json) to resume", "resume")
    return directory
