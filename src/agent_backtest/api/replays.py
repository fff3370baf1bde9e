"""``replay()`` and ``resume()``: a run from its inputs to its scored summary.

Every check runs before the run directory is made (:mod:`agent_backtest.replaying.plan`); the
run's lock is held from the first write to the last, scoring included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from agent_backtest.api.backends import PHOENIX_SCHEME, phoenix_input
from agent_backtest.api.events import RunEvents
from agent_backtest.api.options import (
    AgentOptions,
    BatchOptions,
    CallOptions,
    ExecutorOptions,
    JudgeOptions,
    PathLike,
    ReadingOptions,
    SelectionOptions,
)
from agent_backtest.api.roles import JUDGES, Roles, given_roles, judges
from agent_backtest.errors import UserError, bounded
from agent_backtest.providers import ModelConfig, load_model_config
from agent_backtest.providers.config import RoleName
from agent_backtest.providers.prices import PriceTable
from agent_backtest.providers.roles import RoleModel, check_judges
from agent_backtest.replaying.budget import Budget, check_estimate
from agent_backtest.replaying.jobs import Job
from agent_backtest.replaying.plan import JUDGE_ROLES, plan_replay
from agent_backtest.replaying.run import (
    ReplayResult,
    begin_resume,
    prepare_resume,
    replay_run,
    start_run,
)
from agent_backtest.runs import ResultRecord, RunDirectory
from agent_backtest.runs.lock import run_lock
from agent_backtest.runs.manifest import BatchSettings, ReplaySettings, RunManifest
from agent_backtest.runs.run import Run

if TYPE_CHECKING:
    from agent_backtest.scoring.run import LiveScoring, ScoreOutcome
    from agent_backtest.units import Unit

# Loaded where they are used, not before a replay's first call: the batch API's checks, the
# scorers, and scoring a run after its replay (with judges, or on resume).

MAX_REPEATS = 1000
"""The most repeats of a unit a replay asks for (pass^k is read at k of a few to a few dozen)."""


def replay(
    inputs: PathLike | Sequence[PathLike],
    *,
    model: RoleModel,
    out: PathLike,
    roles: Roles | None = None,
    k: int = 1,
    seed: int = 0,
    reading: ReadingOptions | None = None,
    agent: AgentOptions | None = None,
    selection: SelectionOptions | None = None,
    calls: CallOptions | None = None,
    judging: JudgeOptions | None = None,
    batching: BatchOptions | None = None,
    execution: ExecutorOptions | None = None,
    score: bool = True,
    patch_file: PathLike | None = None,
    allow_unmatched: bool = False,
    labels: Mapping[str, str] | None = None,
    config_file: PathLike | None = None,
    credential_command: str | None = None,
    overwrite: bool = False,
    dry_run: bool = False,
    max_cost: float | None = None,
    hooks: RunEvents | None = None,
    verify_inputs: bool = False,
) -> Run:
    """Replay every selected unit of ``inputs`` on ``model`` into the run directory ``out``,
    then score it against production (unless ``score`` is False).

    ``inputs`` are trace files in any supported format, or one units JSONL; an input
    ``phoenix://HOST:PORT/PROJECT`` is the project's spans, pulled first into
    ``OUT.phoenix.jsonl`` beside the run directory. ``model`` is the
    candidate: ``provider/model``, ``trace`` for the model that served each step, or a typed
    role as ``roles`` takes them. ``roles`` names the judges (``judge``, ``fallback_judge``) of
    the scoring; without one, text gets a labelled token-overlap similarity. Nothing is written and
    nothing is sent until every check has passed; a failed check raises
    :class:`~agent_backtest.errors.UserError` naming the parameter at fault. With
    ``batching.batch`` the candidate's calls go through its provider's batch API (the judges
    are still called live, when the run is scored). An input that the run being overwritten
    recorded with the same size and modification time keeps the sha256 recorded there;
    ``verify_inputs`` hashes every input again.

    The plan estimates what the candidate's and the judge's calls will cost
    (``plan.cost``); with ``max_cost`` (USD) a replay estimated above it is refused before
    anything is written, and a run whose spend reaches it stops ``interrupted`` (reason
    ``budget``), to be finished by :func:`resume`.
    """
    given = [inputs] if isinstance(inputs, str | Path) else list(inputs)
    if not given:
        raise UserError("give at least one input: trace files or a units JSONL", "inputs")
    if not 1 <= k <= MAX_REPEATS:
        raise UserError(f"must be from 1 to {MAX_REPEATS:,}, got {bounded(str(k), 40)}", "k")
    reading, agent = reading or ReadingOptions(), agent or AgentOptions()
    selection, calls = selection or SelectionOptions(), calls or CallOptions()
    judging, execution = judging or JudgeOptions(), execution or ExecutorOptions()
    judge_models = given_roles(roles, JUDGES)
    execution.check()
    _check_max_cost(max_cost)
    config = load_model_config(Path(config_file) if config_file else None)
    resolved = {"candidate": calls.role("candidate", model, config)}
    cache_dir = str(calls.cache_dir) if calls.cache_dir is not None else None
    resolved |= judges(judge_models, config, calls.cache, cache_dir) if score else {}
    settings = ReplaySettings(
        roles=resolved,
        k=k,
        seed=seed,
        config_file=str(config_file) if config_file else None,
        reading=reading.settings(),
        agent=agent.config(),
        selection=selection.settings(),
        dry_run=dry_run,
        batch=(batching or BatchOptions()).settings(),
    )
    _one_way_of_sending(settings.batch, execution)
    paths = [_input_file(item, Path(out)) for item in given]
    source = reading.source(paths, settings.agent)
    # Made before the plan, which scores each answer it finds in the cache while it holds
    # the unit: those units are not read again.
    live = _live_scoring(settings, judging) if score and not dry_run else None
    plan = plan_replay(
        Path(out),
        settings,
        config,
        source,
        selection.selection(),
        patch_file=Path(patch_file) if patch_file is not None else None,
        allow_unmatched=allow_unmatched,
        overwrite=overwrite,
        labels=dict(labels or {}),
        verify_inputs=verify_inputs,
        judge_repeats=judging.judge_repeats,
        on_cached_answer=live.add_now if live is not None else None,
    )
    try:
        if settings.batch is not None:
            from agent_backtest.replaying.batch import check_batch

            check_batch(settings.candidate, plan.candidates, config)
        if max_cost is not None:
            check_estimate(plan.cost, max_cost)
    except BaseException:
        plan.discard()
        raise
    directory = plan.directory
    with ExitStack() as held:
        try:
            if hooks is not None:
                hooks.on_planned(plan)
            # The lock first: a second replay into the same --out (with --overwrite too) is
            # refused before it removes anything of the run being written there.
            directory.make()
            held.enter_context(run_lock(directory.path, "replay"))
            directory.create(overwrite)
        except BaseException:
            plan.discard()
            raise
        held.callback(plan.discard)
        manifest = start_run(plan)
        if dry_run:
            return Run(directory.path)
        on_answer = None
        if live is not None:

            async def on_answer(job: Job, record: ResultRecord) -> None:
                await live.scoring().add(job.position, job.unit, record)

        budget = _budget(max_cost, directory, manifest, config)
        result = replay_run(
            directory, manifest, config, plan.candidates, set(), credential_command, hooks,
            on_answer, execution.executor, execution.ray_address, budget, plan.answers,
        )  # fmt: skip
        if live is not None and result.status != "failed":
            outcome = live.finish(directory)
            if hooks is not None:
                hooks.on_scored(directory.path, outcome)
        else:  # with the judges as run.json records them (the run's cache theirs too)
            _score_after(directory, result, score, {}, judging, AgentOptions(), config_file, hooks)
    return Run(directory.path)


def resume(
    run: PathLike | Run,
    *,
    roles: Roles | None = None,
    retry_errors: bool = False,
    repair: bool = False,
    calls: CallOptions | None = None,
    judging: JudgeOptions | None = None,
    agent: AgentOptions | None = None,
    batching: BatchOptions | None = None,
    execution: ExecutorOptions | None = None,
    score: bool = True,
    credential_command: str | None = None,
    max_cost: float | None = None,
    hooks: RunEvents | None = None,
) -> Run:
    """Finish a run: send only the (unit, repeat) pairs with no result (and, with
    ``retry_errors``, those that ended in an infrastructure error), then score it. ``repair``
    rewrites a results file with torn lines in its middle, keeping every whole record. The run
    may be finished by another executor than the one that started it.

    A batch run first polls the batches it made; ``batching.batch`` sends the rest of any run
    in batches from now on (with its poll interval and size). ``roles`` names judges for its
    scoring instead of the ones the run recorded. ``max_cost`` (USD) bounds what every start of
    the run spends in all; a resume without it is not bounded."""
    directory = RunDirectory(run.path if isinstance(run, Run) else Path(run))
    calls = calls or CallOptions()
    _keeps_its_endpoint_and_cache(calls)
    overrides = calls.overrides()
    judging, agent = judging or JudgeOptions(), agent or AgentOptions()
    judge_models = given_roles(roles, JUDGES)
    execution = execution or ExecutorOptions()
    execution.check()
    _check_max_cost(max_cost)
    with run_lock(_existing(directory), "resume"):
        manifest, config, refs = prepare_resume(directory, overrides)
        batch = (batching or BatchOptions()).settings()
        if batch is not None:
            manifest.config.batch = batch
        if manifest.config.batch is not None:
            from agent_backtest.replaying.batch import check_batch

            check_batch(manifest.config.candidate, refs, config)
        _one_way_of_sending(manifest.config.batch, execution)
        if score:  # the judges are checked before anything is sent again
            from agent_backtest.api.scoring import run_cache

            named = list(judges(judge_models, config, *run_cache(manifest)).values())
            check_judges(named, [str(ref) for ref in refs], config)
        budget = _budget(max_cost, directory, manifest, config)
        if budget is not None and budget.reached:
            raise UserError(
                f"the run has spent ${float(budget.spent):.4f} already, at or over this budget: "
                "raise --max-cost, or leave it out to finish the run",
                "max_cost",
            )
        done = begin_resume(directory, manifest, retry_errors, repair)
        result = replay_run(
            directory, manifest, config, refs, done, credential_command, hooks, None,
            execution.executor, execution.ray_address, budget,
        )  # fmt: skip
        source = manifest.config.config_file
        _score_after(directory, result, score, judge_models, judging, agent, source, hooks)
    return Run(directory.path)


def _input_file(given: PathLike, out: Path) -> Path:
    """An input as a file: ``phoenix://HOST:PORT/PROJECT`` is pulled first (next to ``out``)."""
    if isinstance(given, str) and given.startswith(PHOENIX_SCHEME):
        return phoenix_input(given, out)
    return Path(given)


def _check_max_cost(max_cost: float | None) -> None:
    if max_cost is not None and not max_cost > 0:
        raise UserError(f"must be a positive amount in USD, got {max_cost}", "max_cost")


def _budget(
    max_cost: float | None, directory: RunDirectory, manifest: RunManifest, config: ModelConfig
) -> Budget | None:
    """The run's budget, with what it spent before this start; None without ``max_cost``."""
    if max_cost is None:
        return None
    return Budget(max_cost, directory, manifest, PriceTable(config.prices))


def _keeps_its_endpoint_and_cache(calls: CallOptions) -> None:
    """A resumed run calls the endpoint and uses the response cache run.json records (so no
    answer it already paid for is paid again): another one is refused, not ignored."""
    for parameter, given in (
        ("base_url", calls.base_url is not None),
        ("cache_dir", calls.cache_dir is not None),
        ("cache", not calls.cache),
    ):
        if given:
            raise UserError(
                "a run you resume keeps the endpoint and the response cache it was started "
                "with (run.json): leave it out",
                parameter,
            )


def _live_scoring(settings: ReplaySettings, judging: JudgeOptions) -> _LiveScoring | None:
    """Scoring as the answers land, for a run without a judge (nothing to wait for): its
    scores are ready with its last answer. A judged run is scored after the replay."""
    if any(name in JUDGE_ROLES for name in settings.roles):
        return None
    return _LiveScoring(settings, judging)


class _LiveScoring:
    """A run's live scoring, made the first time it is needed: for an answer the plan found in
    the cache, or for the first answer. The scorers and the summary then load while the first
    calls are out, not on the way to them."""

    def __init__(self, settings: ReplaySettings, judging: JudgeOptions) -> None:
        self.settings, self.judging = settings, judging
        self._live: LiveScoring | None = None

    def scoring(self) -> LiveScoring:
        """The live scoring, made on the first call."""
        if self._live is None:
            from agent_backtest.api.scoring import score_settings
            from agent_backtest.scoring.run import LiveScoring

            settings = score_settings(self.judging, self.settings.agent, {})
            self._live = LiveScoring(settings, self.settings.k)
        return self._live

    def add_now(self, position: int, unit: Unit, result: ResultRecord) -> None:
        """Score an answer the plan found in the cache."""
        self.scoring().add_now(position, unit, result)

    def finish(self, directory: RunDirectory) -> ScoreOutcome:
        """Write the run's scores and summary."""
        return self.scoring().finish(directory)


def _existing(directory: RunDirectory) -> Path:
    """The run directory, which must hold a run."""
    if not directory.holds_run():
        raise UserError(f"{directory.path} holds no run (no run.json) to resume", "resume")
    return directory.path


def _score_after(
    directory: RunDirectory,
    result: ReplayResult,
    score: bool,
    judge_models: Mapping[RoleName, RoleModel],
    judging: JudgeOptions,
    agent: AgentOptions,
    config_file: PathLike | None,
    hooks: RunEvents | None,
) -> None:
    """Score what arrived, unless told not to or nothing could be scored; without a judge
    named here, with the judges the run recorded."""
    if score and result.status != "failed":
        recorded = {
            name: role for name, role in result.manifest.config.roles.items() if name in JUDGE_ROLES
        }
        from agent_backtest.api.scoring import score_locked

        outcome = score_locked(directory, judge_models, judging, agent, config_file, recorded)
        if hooks is not None:
            hooks.on_scored(directory.path, outcome)


def _one_way_of_sending(batch: BatchSettings | None, execution: ExecutorOptions) -> None:
    """A run's calls go through the provider's batch API or live on an executor, not both."""
    if batch is not None and execution.executor == "ray":
        raise UserError(
            "makes live calls on Ray workers, and this run sends provider batches (--batch): "
            "choose one",
            "executor",
        )
