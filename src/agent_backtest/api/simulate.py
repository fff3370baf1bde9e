"""``simulate_run()`` and ``simulate_resume()``: flows played through a live agent into a run
directory, every conversation recorded as it ends.

Every check runs before the run directory is made (:mod:`agent_backtest.simulate.plan`); the
run's lock is held from the first write to the last. The judge stage comes after the
conversations, under the same lock (unless ``skip_judge``); its judges, owners, tools and checks
are checked with everything else, before the first flow is played.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agent_backtest.api.options import ExecutorOptions, PathLike
from agent_backtest.api.roles import JUDGES, Roles, given_roles
from agent_backtest.errors import UserError
from agent_backtest.providers import ModelConfig, load_model_config
from agent_backtest.providers.config import ModelRole, RoleName
from agent_backtest.providers.roles import RoleModel, resolve_role
from agent_backtest.runs.files import private_mkdir
from agent_backtest.runs.lock import run_lock
from agent_backtest.simulate.generation import (
    Generated,
    GenerateOptions,
    check_flows_out,
    plan_generation,
    write_flows,
)
from agent_backtest.simulate.judging import (
    JudgingHooks,
    JudgingOptions,
    JudgingOutcome,
    JudgingSettings,
    check_judging,
    judge_locked,
    plan_judging,
    record_judging,
)
from agent_backtest.simulate.layout import CONVERSATIONS, MANIFEST
from agent_backtest.simulate.log import read_conversations
from agent_backtest.simulate.manifest import SimulateManifest
from agent_backtest.simulate.models import ConversationRecord
from agent_backtest.simulate.plan import (
    IsolationOptions,
    begin_resume,
    plan_resume,
    plan_simulation,
)
from agent_backtest.simulate.run import SimulateHooks, play_run, write_start
from agent_backtest.simulate.selection import FlowSelection, describe_left_out
from agent_backtest.simulate.targets.turns import DEFAULT_RESULT_CHARS

__all__ = [
    "ConversationRecord",
    "GenerateOptions",
    "Generated",
    "IsolationOptions",
    "JudgingOptions",
    "SimulateHooks",
    "SimulateRun",
    "simulate_generate",
    "simulate_resume",
    "simulate_run",
]
# The roles a simulate run has: the agent of a model target, the simulated user, the teacher
# that writes flows (with ``generate``) and the judges.
RUN_ROLES: tuple[RoleName, ...] = ("agent", "user", "teacher", *JUDGES)


@dataclass(frozen=True)
class SimulateRun:
    """A simulate run directory, read back."""

    path: Path
    manifest: SimulateManifest
    judging: JudgingOutcome | None = None
    """The judge stage's verdicts; None when it was skipped."""

    @property
    def left_out(self) -> str:
        """How many flows the selection left out and why, in words; empty when none."""
        return describe_left_out(self.manifest.selection.left_out)

    def conversations(self) -> list[ConversationRecord]:
        """The recorded conversations, in the order they ended."""
        return read_conversations(self.path / CONVERSATIONS)


def simulate_run(
    flows: PathLike | None = None,
    *,
    target: PathLike,
    out: PathLike,
    roles: Roles | None = None,
    families: Sequence[str] = (),
    per_family: int | None = None,
    offset: int = 0,
    limit: int | None = None,
    from_run: PathLike | None = None,
    from_verdicts: Sequence[str] = (),
    from_owners: Sequence[str] = (),
    exclude_judged: Sequence[PathLike] = (),
    ledger: PathLike | None = None,
    isolation: IsolationOptions | None = None,
    concurrency: int = 4,
    agent_config: PathLike | None = None,
    config_file: PathLike | None = None,
    result_chars: int = DEFAULT_RESULT_CHARS,
    skip_judge: bool = False,
    judging: JudgingOptions | None = None,
    hooks: SimulateHooks | None = None,
    execution: ExecutorOptions | None = None,
    generate: GenerateOptions | None = None,
    k: int = 1,
) -> SimulateRun:
    """Play the selected flows of ``flows`` through the agent of the ``target`` file into the
    run directory ``out``.

    With ``generate`` instead of ``flows``, the flows are written by the teacher model (as
    :func:`simulate_generate` writes them), after every other check, into the run's
    ``flows.jsonl``, then played. Instead of ``flows``, ``from_run`` plays the flows of an
    earlier simulate run as it played them, kept by its ``from_verdicts`` (pass, fail,
    uncertain) and ``from_owners``; ``exclude_judged`` (runs, or folders of runs) leaves out the
    seeds they judged pass or fail through the same target (its name and file sha256).
    ``ledger`` names a team ledger file (Markdown) the run's findings are appended to, once,
    when every conversation has a verdict. Each selected flow is played ``k`` times (repeats
    ``ID--1`` … ``ID--k``, each simulated user seeded by its number); the summary then gives
    pass^k and pass@k.

    ``roles`` names the models: ``user`` plays the flows with a simulated user; ``agent`` is the
    model of a ``model`` target, the built-in agent loop; ``teacher`` writes the flows with
    ``generate``; ``judge`` and ``fallback_judge`` judge the conversations (each else
    ``[roles.NAME]`` of the config). Flows that may change the agent's data are refused unless
    ``isolation`` skips or isolates them. Then every conversation is judged (``judging``: the
    owners, tools and checks, as :func:`~agent_backtest.simulate_judge` takes them), unless
    ``skip_judge``. ``execution`` says where the agent's, the user's and the judges' model calls
    are made (here, or on a Ray cluster); the conversations and the run directory are the same
    either way. Nothing is written and nothing is sent until every check has passed; a failed
    check raises :class:`~agent_backtest.errors.UserError` naming the parameter at fault.
    """
    execution = _checked(execution)
    models = given_roles(roles, RUN_ROLES)
    if "teacher" in models and generate is None:
        raise UserError("the teacher writes flows to play: give generate too", "roles")
    judge = _judge_stage(skip_judge, _with_judges(judging, models), config_file, None)
    config = load_model_config(Path(config_file) if config_file else None)
    role = _user_role(config, models.get("user"))
    generation = plan_generation(_with_teacher(generate, models), config) if generate else None
    plan = plan_simulation(
        _flows_source(flows, generate, from_run),
        Path(target),
        Path(out),
        selection=FlowSelection(
            tuple(families),
            per_family,
            offset,
            limit,
            from_verdicts=tuple(from_verdicts),
            from_owners=tuple(from_owners),
            from_run=Path(from_run) if from_run is not None else None,
            exclude_judged=tuple(Path(run) for run in exclude_judged),
        ),
        isolation=isolation or IsolationOptions(),
        user_role=role,
        config=config,
        config_file=Path(config_file) if config_file else None,
        agent=models.get("agent"),
        agent_config_file=Path(agent_config) if agent_config else None,
        concurrency=concurrency,
        result_chars=result_chars,
        generation=generation,
        ledger=Path(ledger) if ledger is not None else None,
        k=k,
    )
    plan.executor, plan.ray_address = execution.executor, execution.ray_address
    plan.manifest.skip_judge = judge is None
    created = _make(plan.out)
    with run_lock(plan.out, "simulate"):
        try:
            write_start(plan)
            if judge:
                record_judging(plan.out, judge[1])
        except BaseException:
            if created:
                shutil.rmtree(plan.out, ignore_errors=True)
            raise
        play_run(plan, hooks)
        verdicts = _judged(plan.out, judge[0], execution, hooks) if judge else None
    return SimulateRun(plan.out, _manifest_of(plan.out), verdicts)


def _flows_source(
    flows: PathLike | None, generate: GenerateOptions | None, from_run: PathLike | None
) -> Path | None:
    """The flows file (None with ``from_run``), or with ``generate`` the capability file the
    flows are written from."""
    if generate is None:
        return Path(flows) if flows is not None else None
    if flows is None and from_run is None:
        return generate.capabilities
    raise UserError(
        "give a flows file, --from RUN, or the capabilities to generate flows from: one of them",
        "flows",
    )


def simulate_generate(
    capabilities: PathLike,
    *,
    tools: PathLike,
    out: PathLike,
    per_family: int,
    roles: Roles | None = None,
    config_file: PathLike | None = None,
) -> Generated:
    """Have the teacher model (``roles["teacher"]``; else ``[roles.teacher]`` of the config)
    write exactly ``per_family`` flows for each family of the ``capabilities`` file, with the
    ``tools`` file as the agent's tool catalogue, into the new flows file ``out`` (JSONL).

    Every check runs before the teacher is asked; an incomplete set raises
    :class:`~agent_backtest.simulate.generation.GenerationError` naming the count missing per
    family, and nothing is written.
    """
    teacher = given_roles(roles, ("teacher",)).get("teacher")
    config = load_model_config(Path(config_file) if config_file else None)
    options = GenerateOptions(Path(capabilities), Path(tools), per_family, teacher)
    plan = plan_generation(options, config)
    check_flows_out(Path(out))
    generated = plan.generate()
    write_flows(Path(out), generated.flows)
    return generated


def simulate_resume(
    run: PathLike,
    *,
    roles: Roles | None = None,
    concurrency: int | None = None,
    snapshot_cmd: str | None = None,
    restore_cmd: str | None = None,
    retry_errors: bool = False,
    skip_judge: bool = False,
    judging: JudgingOptions | None = None,
    hooks: SimulateHooks | None = None,
    execution: ExecutorOptions | None = None,
) -> SimulateRun:
    """Finish a run: play only the flows with no recorded conversation (and, with
    ``retry_errors``, those whose conversation ended in a transport error), then judge every
    conversation without a verdict (``roles``' judges and ``judging`` filled from the run's
    earlier judging); by either executor, whichever started the run."""
    execution = _checked(execution)
    models = given_roles(roles, JUDGES)
    path = Path(run)
    if not path.is_dir():
        raise UserError(f"{path} is not a run directory", "resume")
    judge = _judge_stage(skip_judge, _with_judges(judging, models), None, path)
    with run_lock(path, "resume"):
        plan = plan_resume(
            path, concurrency=concurrency, snapshot_cmd=snapshot_cmd, restore_cmd=restore_cmd
        )
        plan.executor, plan.ray_address = execution.executor, execution.ray_address
        plan.manifest.skip_judge = judge is None
        begin_resume(plan, retry_errors)
        play_run(plan, hooks)
        verdicts = _judged(path, judge[0], execution, hooks) if judge else None
    return SimulateRun(plan.out, _manifest_of(plan.out), verdicts)


def _judged(
    run: Path, judging: JudgingOptions, execution: ExecutorOptions, hooks: JudgingHooks | None
) -> JudgingOutcome:
    """The run's conversations judged (the caller holds its lock), the judges' calls made by
    ``execution`` as the conversations' were; ``hooks`` hears of each verdict."""
    plan = plan_judging(run, judging)
    plan.executor, plan.ray_address = execution.executor, execution.ray_address
    return judge_locked(plan, hooks)


def _manifest_of(run: Path) -> SimulateManifest:
    """The run's run.json as it stands now: the judges' calls counted in it too."""
    return SimulateManifest.load(run / MANIFEST)


def _checked(execution: ExecutorOptions | None) -> ExecutorOptions:
    """Where the calls are made, checked (Ray installed when asked for)."""
    execution = execution or ExecutorOptions()
    execution.check()
    return execution


def _with_judges(
    judging: JudgingOptions | None, models: dict[RoleName, RoleModel]
) -> JudgingOptions:
    """The judging options with the judges of ``roles``, where the API names them."""
    options = judging or JudgingOptions()
    if options.judge is not None or options.fallback_judge is not None:
        raise UserError("name the judges in roles: roles={'judge': …}", "judging")
    return replace(options, judge=models.get("judge"), fallback_judge=models.get("fallback_judge"))


def _with_teacher(generate: GenerateOptions, models: dict[RoleName, RoleModel]) -> GenerateOptions:
    """The generation options with the teacher of ``roles``, where the API names it."""
    if generate.teacher is not None:
        raise UserError("name the teacher in roles: roles={'teacher': …}", "generate")
    return replace(generate, teacher=models.get("teacher"))


def _user_role(config: ModelConfig, user: RoleModel | None) -> ModelRole | None:
    """The user role: the model named, else ``[roles.user]`` of the config, else none."""
    configured = config.roles.get("user")
    if user is None and (configured is None or configured.model is None):
        return None
    return resolve_role("user", config, user)


def _judge_stage(
    skip_judge: bool,
    judging: JudgingOptions | None,
    config_file: PathLike | None,
    run: Path | None,
) -> tuple[JudgingOptions, JudgingSettings] | None:
    """The judge stage's options, checked now, and what judging.json records of them; None when
    the stage is skipped.

    The stage judges only what has no verdict yet, so a resumed run never asks twice.
    """
    if skip_judge:
        return None
    options = judging or JudgingOptions()
    if options.config_file is None and config_file is not None:
        options = replace(options, config_file=Path(config_file))
    settings = check_judging(options, run)
    return replace(options, resume=True, rejudge=None), settings


def _make(out: Path) -> bool:
    """Make the run directory (0700); True when it did not exist before."""
    created = not out.exists()
    try:
        private_mkdir(out)
        os.chmod(out, 0o700)
    except OSError as exc:
        raise UserError(
            f"cannot make the run directory {out} ({exc.strerror}): name another --out", "out"
        ) from None
    return created
