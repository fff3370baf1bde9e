"""A bench run from plan to grades: check everything, roll out, then grade against the gold.

:func:`plan_run` makes every check a run can fail before anything is written (the benchmark
readable, its environments importable, every role resolvable with its key, the graders found,
the output directory new or empty, the gold file present but unread, ``GIT_COMMIT`` matching
the checkout). :func:`start_run` makes the directory and writes run.json; :func:`execute` runs
every episode without a record, appending each record the moment its episode ends (its trace
written first), then grades the run. :func:`prepare_resume` plans a started run again from its
run.json, so a resume runs exactly the episodes still missing. The caller holds the run's lock
(``runs.lock.run_lock``) around everything that writes.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from agent_backtest.bench.benchmark import Benchmark, load_benchmark, select_cases
from agent_backtest.bench.environment import Environment
from agent_backtest.bench.episode import Agent, Episode, run_episode
from agent_backtest.bench.gold import check_gold_file, read_gold
from agent_backtest.bench.graders import Grader, GradingInput
from agent_backtest.bench.grading import JudgeBridge, grade_all, resolve_graders
from agent_backtest.bench.models import Case, EpisodeRecord, GradeRecord
from agent_backtest.bench.plan_checks import (
    check_git_commit,
    check_out,
    check_roles,
    check_rollouts,
    check_user,
    environment_factories,
    policy_revision,
)
from agent_backtest.bench.results import BenchSummary, write_results
from agent_backtest.bench.rollouts import (
    PROMPT_GROUP_DERIVATION,
    SEED_DERIVATION,
    Rollout,
    plan_rollouts,
    run_all,
)
from agent_backtest.bench.run_files import (
    episodes_log,
    grades_log,
    read_episodes,
    settle_episodes,
)
from agent_backtest.bench.run_manifest import (
    MANIFEST_FILE,
    BenchmarkDescriptor,
    BenchRunManifest,
    CaseSelectionSettings,
    GoldDescriptor,
    RolloutSettings,
)
from agent_backtest.bench.run_options import CaseOptions, RolloutOptions
from agent_backtest.bench.traces import episode_session, read_transcript, session_bytes, trace_name
from agent_backtest.bench.users import (
    DEFAULT_USER_PROMPT,
    USER_PROMPTS,
    ScriptedUser,
    User,
    UserModel,
    model_user,
)
from agent_backtest.episodes.calls import CallsLost, ModelCaller
from agent_backtest.errors import InputError, Terminated, UserError
from agent_backtest.executors import RoleCalls
from agent_backtest.providers import CallCounters, ModelConfig, ModelRef
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.roles import check_role, close_clients, open_clients
from agent_backtest.runs.files import private_atomic_writer, private_mkdir
from agent_backtest.runs.manifest import RunStatus, code_version, describe_input, now
from agent_backtest.runs.provenance import collect_provenance
from agent_backtest.runs.record_log import LogWriter
from agent_backtest.runs.settle import settle
from agent_backtest.runs.signals import StopRequest, stop_on_signals

GRADING_CONCURRENCY = 8
DESCRIBED_MANIFEST_FIELDS = {"name", "version", "release", "training_prohibited"}


@dataclass
class BenchPlan:
    """A run that passed every check, with what it needs to run; nothing is written yet."""

    directory: Path
    benchmark: Benchmark
    manifest: BenchRunManifest
    rollouts: list[Rollout]
    environments: dict[str, Callable[[], Environment]]
    graders: list[tuple[str, Grader]]
    config: ModelConfig


@dataclass
class BenchOutcome:
    """How a start of the run ended: the episodes it ran, and the grades if it graded."""

    directory: Path
    manifest: BenchRunManifest
    ran: int
    already_done: int
    records: list[EpisodeRecord] = field(default_factory=list)
    grades: list[GradeRecord] = field(default_factory=list)
    summary: BenchSummary | None = None
    """The figures written into the run (summary.json, results.csv, report.html) once graded."""


def plan_run(
    benchmark_path: Path,
    out: Path,
    roles: dict[str, ModelRole],
    config: ModelConfig,
    cases: CaseOptions,
    rollout: RolloutOptions,
    config_file: str | None = None,
    scripted_user: bool = False,
    user_prompt: str | None = None,
) -> BenchPlan:
    """Check everything (see the module docstring); ``roles`` holds agent, user when a model
    plays it (``scripted_user`` when the cases' scripts do), and judge when given;
    ``user_prompt`` names the simulated user's prompt (None: the benchmark's own)."""
    check_out(out)
    git_commit = check_git_commit()
    benchmark = load_benchmark(benchmark_path)
    manifest_file = benchmark.manifest
    selected = select_cases(
        benchmark.cases, list(cases.case_ids), cases.shard_count, cases.shard_index, cases.limit
    )
    check_rollouts(rollout.rollouts, rollout.concurrency, rollout.episode_timeout)
    check_gold_file(benchmark.gold_path)
    environments = environment_factories(benchmark, selected)
    revisions = {name: policy_revision(make, name) for name, make in environments.items()}
    graders = resolve_graders(manifest_file.graders)
    check_roles(roles, config, manifest_file.graders)
    prompt = check_user(benchmark, selected, roles, scripted_user, user_prompt)
    agent = roles["agent"]
    planned = plan_rollouts(
        selected,
        rollout.rollouts,
        rollout.seed,
        agent.model,
        lambda case: revisions[benchmark.environment_of(case)],
    )
    manifest = _new_manifest(
        benchmark, selected, cases, rollout, roles, revisions, len(planned), git_commit
    )
    manifest.scripted_user = scripted_user and "user" not in roles
    manifest.user_prompt = prompt  # None unless a model plays the user
    manifest.config_file = config_file  # where the resume finds the endpoints again
    return BenchPlan(out, benchmark, manifest, planned, environments, graders, config)


def _descriptor(benchmark: Benchmark) -> BenchmarkDescriptor:
    """The benchmark as run.json records it: where it is, what its manifest says it is (name,
    version, release, whether training on it is prohibited) and its content hash."""
    said = benchmark.manifest.model_dump(include=DESCRIBED_MANIFEST_FIELDS)
    return BenchmarkDescriptor(path=str(benchmark.path.resolve()), sha256=benchmark.sha256, **said)


def _new_manifest(
    benchmark: Benchmark,
    selected: Sequence[Case],
    cases: CaseOptions,
    rollout: RolloutOptions,
    roles: dict[str, ModelRole],
    revisions: dict[str, str],
    episodes: int,
    git_commit: str | None,
) -> BenchRunManifest:
    """run.json of a new run, made now by this code."""
    manifest_file = benchmark.manifest
    moment = now()
    return BenchRunManifest(
        run_id="bench-" + secrets.token_hex(8),
        code_version=code_version(),
        git_commit=git_commit,
        benchmark=_descriptor(benchmark),
        environment=manifest_file.environment,
        policy_revisions=revisions,
        roles=roles,
        scripted_user=False,
        rules=manifest_file.rules,
        graders=list(manifest_file.graders),
        selection=CaseSelectionSettings(
            case_ids=list(cases.case_ids),
            shard_count=cases.shard_count,
            shard_index=cases.shard_index,
            limit=cases.limit,
            selected=[case.id for case in selected],
        ),
        rollout=RolloutSettings(
            rollouts=rollout.rollouts,
            base_seed=rollout.seed,
            seed_derivation=SEED_DERIVATION,
            prompt_group_derivation=PROMPT_GROUP_DERIVATION,
            concurrency=rollout.concurrency,
            episode_timeout=rollout.episode_timeout,
        ),
        episodes=episodes,
        created_at=moment,
        updated_at=moment,
    )


def start_run(plan: BenchPlan) -> None:
    """Write the planned run's run.json into its directory (made and locked by the caller)."""
    private_mkdir(plan.directory / "traces")
    plan.manifest.save(plan.directory / MANIFEST_FILE)


def prepare_resume(directory: Path, config: ModelConfig) -> tuple[BenchPlan, set[tuple[str, int]]]:
    """The run in ``directory`` planned again from its run.json, and the episodes it has,
    marked running again; the episodes file is rewritten clean (a torn last line dropped).
    Checked before anything is written: the benchmark and its environments are the ones the
    run started with."""
    manifest = load_manifest(directory)
    benchmark = load_benchmark(Path(manifest.benchmark.path))
    if benchmark.sha256 != manifest.benchmark.sha256:
        raise UserError(
            f"the benchmark {benchmark.path} changed since the run started (its manifest or "
            "cases): resume it with the benchmark as it was, or start a new run",
            "resume",
        )
    by_id = {case.id: case for case in benchmark.cases}
    selected = [by_id[case_id] for case_id in manifest.selection.selected]
    environments = environment_factories(benchmark, selected)
    for name, make in environments.items():
        if policy_revision(make, name) != manifest.policy_revisions.get(name):
            raise UserError(
                f"the environment {name}'s policy or tools changed since the run started: its "
                "episodes would not be comparable; start a new run",
                "resume",
            )
    graders = resolve_graders(manifest.graders)
    for role in manifest.roles.values():
        check_role(role, [role.ref], config)
    planned = plan_rollouts(
        selected,
        manifest.rollout.rollouts,
        manifest.rollout.base_seed,
        manifest.roles["agent"].model,
        lambda case: manifest.policy_revisions[benchmark.environment_of(case)],
    )
    plan = BenchPlan(directory, benchmark, manifest, planned, environments, graders, config)
    records = settle_episodes(directory)
    manifest.attempts_of_run += 1
    manifest.status, manifest.finished_at = "running", None
    manifest.save(directory / MANIFEST_FILE)
    return plan, {record.key for record in records}


def load_manifest(directory: Path) -> BenchRunManifest:
    """The run's run.json; a folder without one holds no bench run."""
    if not (directory / MANIFEST_FILE).is_file():
        raise UserError(f"{directory} holds no bench run (no run.json) to resume", "resume")
    try:
        return BenchRunManifest.load(directory / MANIFEST_FILE)
    except ValidationError as exc:
        raise InputError(
            directory / MANIFEST_FILE, None, f"not a bench run: {exc.errors()[0]['msg']}"
        ) from None


@dataclass
class BenchHooks:
    """What a caller sees while a bench run goes: its start, each episode as it is saved, and
    the grading."""

    on_start: Callable[[int, int], None] = lambda todo, done: None
    """How many episodes are run now, and how many were already done."""
    on_episode: Callable[[EpisodeRecord], None] = lambda record: None
    on_grading: Callable[[int], None] = lambda episodes: None
    """The grading of the run's episodes starts (the gold is read now)."""


def execute(
    plan: BenchPlan,
    done: set[tuple[str, int]],
    calls: RoleCalls,
    hooks: BenchHooks | None = None,
    loads: Sequence[str] = (),
) -> BenchOutcome:
    """Run every planned episode not in ``done`` (``hooks`` hears of the start, each episode as
    it is saved, and the grading), the agent's and the user's model calls made by ``calls``,
    then grade the run once none is missing. What this start runs on is recorded first
    (``loads``: the optional libraries ``calls`` will load, ray for the Ray executor)."""
    manifest, directory = plan.manifest, plan.directory
    manifest.provenance.append(collect_provenance(manifest.roles, plan.config, loads=loads))
    manifest.save(directory / MANIFEST_FILE)
    todo = [rollout for rollout in plan.rollouts if rollout.key not in done]
    counters = {name: CallCounters() for name in manifest.roles}
    hooks = hooks or BenchHooks()
    hooks.on_start(len(todo), len(done))
    try:
        stop = asyncio.run(_roll_out(plan, todo, counters, calls, hooks.on_episode))
    except BaseException as exc:
        _add_counts(manifest, counters)
        stopped = _stop_in(exc)
        _settle(plan, "interrupted" if stopped is not None else "failed")
        if isinstance(stopped, CallsLost):
            raise UserError(
                f"{stopped}: the episodes ended so far are saved; finish the run with "
                f"abt bench run --resume {directory}",
                "executor",
            ) from None
        if stopped is not None:  # raised inside an episode: the group around it is not the news
            raise stopped from None
        raise
    _add_counts(manifest, counters)
    if stop:  # asked to stop: the run is saved as it is, to be resumed
        _settle(plan, "interrupted")
        stop.end_if_asked()
    records = read_episodes(directory)
    outcome = BenchOutcome(directory, manifest, len(todo), len(done), records)
    _settle(plan, "running")
    hooks.on_grading(len(records))
    outcome.grades = grade_run(plan, records)
    outcome.summary = write_results(directory)
    return outcome


def _stop_in(exc: BaseException) -> BaseException | None:
    """The Ctrl-C, SIGTERM, lost callers or unusable executor that ``exc`` is, or that a task
    group wrapped in it: the run stops as it is, to be resumed."""
    if isinstance(exc, KeyboardInterrupt | Terminated | CallsLost | UserError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _stop_in(inner)
            if found is not None:
                return found
    return None


def grade_run(plan: BenchPlan, records: list[EpisodeRecord]) -> list[GradeRecord]:
    """Read the gold (now, after every rollout), grade every episode, write grades.jsonl and
    the gold's descriptor; a gold that cannot be used fails the run, which a resume grades."""
    manifest, benchmark = plan.manifest, plan.benchmark
    try:
        gold = read_gold(benchmark.gold_path, [record.case_id for record in records])
    except UserError as exc:
        manifest.grading_error = str(exc)
        _settle(plan, "failed")
        raise
    cases = {case.id: case for case in benchmark.cases}

    def grading_input(record: EpisodeRecord) -> Callable[[JudgeBridge | None], GradingInput]:
        case = cases[record.case_id]
        environment = plan.environments[benchmark.environment_of(case)]
        # The transcript is read when its episode is graded, so only the episodes being graded
        # hold theirs: memory stays flat however many episodes the run has.
        return lambda judge: GradingInput(
            case,
            gold[record.case_id],
            record,
            read_transcript(plan.directory / record.trace),
            environment,
            judge,
        )

    inputs = [grading_input(record) for record in records]
    grades = asyncio.run(_grade(plan, inputs))
    grades_log(plan.directory).rewrite(grades)
    described = describe_input(benchmark.gold_path)
    manifest.gold = GoldDescriptor(path=described.path, sha256=described.sha256)
    manifest.grading_error = None
    _settle(plan, None)
    return grades


async def _roll_out(
    plan: BenchPlan,
    todo: list[Rollout],
    counters: dict[str, CallCounters],
    calls: RoleCalls,
    on_episode: Callable[[EpisodeRecord], None],
) -> StopRequest:
    """Every episode of ``todo``, ``concurrency`` at once, each saved as it ends, until done or
    asked to stop (see ``runs.signals``); how it was asked."""
    manifest = plan.manifest
    agent_role = manifest.roles["agent"]
    agent_clients = open_clients(agent_role, [agent_role.ref], plan.config, counters["agent"])
    user_role = manifest.roles.get("user")
    user_clients = (
        open_clients(user_role, [user_role.ref], plan.config, counters["user"]) if user_role else {}
    )
    episodes = episodes_log(plan.directory).open()
    try:
        # the user's executor closed before the agent's
        with ExitStack() as opened, stop_on_signals() as stop:
            agent_calls = opened.enter_context(calls(agent_role, agent_clients))
            user_calls = opened.enter_context(calls(user_role, user_clients)) if user_role else {}
            ref = agent_role.ref
            agent = Agent(agent_calls[ref], ref.model, ref.provider, agent_role.sampling)
            user_model = _user_model(manifest, user_calls)

            async def run_one(rollout: Rollout) -> None:
                if stop:  # asked to stop: no new episode
                    return
                case = rollout.case
                make = plan.environments[plan.benchmark.environment_of(case)]
                user = _user(case, rollout, manifest, user_model)
                episode = await run_episode(
                    rollout, make, agent, user, manifest.rules, manifest.rollout.episode_timeout
                )
                on_episode(_save(plan, episode, episodes))

            await run_all(todo, run_one, manifest.rollout.concurrency)
        return stop
    finally:
        episodes.close()
        await close_clients(agent_clients)
        await close_clients(user_clients)


def _user_model(
    manifest: BenchRunManifest, callers: Mapping[ModelRef, ModelCaller]
) -> UserModel | None:
    """How the run's simulated users ask the user role's model; None when no model plays the
    user. A run recorded before the prompt was chosen had abt's."""
    role = manifest.roles.get("user")
    if role is None:
        return None
    prompt = USER_PROMPTS[manifest.user_prompt or DEFAULT_USER_PROMPT]
    return UserModel(callers[role.ref], role.ref.model, prompt.make(), role.sampling)


def _user(
    case: Case, rollout: Rollout, manifest: BenchRunManifest, model: UserModel | None
) -> User | None:
    """The user of one episode: none for a case of opening messages, else the user role's
    model or the script."""
    if case.messages or case.instruction is None:
        return None
    stop = manifest.rules.stop_marker or ""
    if model is None:
        return ScriptedUser.of(case, stop)
    return model_user(model, case.instruction, stop, rollout.seed)


def _save(plan: BenchPlan, episode: Episode, episodes: LogWriter[EpisodeRecord]) -> EpisodeRecord:
    """The episode's trace (atomically), then its record appended: a record always has its
    trace, and an episode killed before its record is run again by a resume."""
    rollout = episode.rollout
    trace = trace_name(rollout.episode_id)
    with private_atomic_writer(plan.directory / trace) as handle:
        handle.write(session_bytes(episode_session(episode, plan.benchmark.manifest.name)))
    record = EpisodeRecord(
        episode_id=rollout.episode_id,
        case_id=rollout.case.id,
        rollout=rollout.rollout,
        seed=rollout.seed,
        prompt_group=rollout.prompt_group,
        ended_by=episode.ended_by,  # type: ignore[arg-type]
        error=episode.error,
        steps=episode.steps,
        tool_calls=episode.tool_calls,
        model_calls=episode.model_calls,
        input_tokens=episode.input_tokens,
        output_tokens=episode.output_tokens,
        seconds=episode.seconds,
        state_hash=episode.state_hash,
        trace=trace,
    )
    episodes.append(record)
    return record


async def _grade(
    plan: BenchPlan, inputs: list[Callable[[JudgeBridge | None], GradingInput]]
) -> list[GradeRecord]:
    """Grade with the judge role's client open, when the run has a judge."""
    role = plan.manifest.roles.get("judge")
    counters = {"judge": CallCounters()}
    clients = open_clients(role, [role.ref], plan.config, counters["judge"]) if role else {}
    judge = (clients[role.ref], role.ref.model) if role else None
    try:
        return await grade_all(
            inputs, plan.graders, plan.manifest.rules, judge, GRADING_CONCURRENCY
        )
    finally:
        await close_clients(clients)
        if role is not None:
            _add_counts(plan.manifest, counters)


def _add_counts(manifest: BenchRunManifest, counters: dict[str, CallCounters]) -> None:
    """Add this start's calls of each role to the run's counts."""
    for name, counted in counters.items():
        manifest.add_counts(name, counted.as_dict())


def _settle(plan: BenchPlan, ended: RunStatus | None) -> None:
    """The run's status from its records (unless it ``ended`` otherwise); run.json saved."""
    manifest = plan.manifest
    records = read_episodes(plan.directory)
    errors = Counter(record.error.kind for record in records if record.error is not None)
    manifest.errors = dict(sorted(errors.items()))
    settle(manifest, plan.directory / MANIFEST_FILE, ended, len(records), errors.total())
