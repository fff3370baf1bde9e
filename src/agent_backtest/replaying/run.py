"""A replay run from start to finish: the run directory, the clients, the engine, the manifest.

The settings that decide the answers are stored in run.json, so ``--resume`` sends the missing
(unit, repeat) pairs exactly as the first start would have. The caller holds the run's lock
(``runs.lock.run_lock``) around everything here that writes.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_backtest.errors import InputError, Terminated
from agent_backtest.executors import (
    Executor,
    ExecutorKind,
    open_executor,
)
from agent_backtest.providers import (
    CallCounters,
    CredentialCommand,
    ModelClient,
    ModelConfig,
    ModelRef,
    load_model_config,
)
from agent_backtest.providers.roles import check_role, close_clients, open_clients
from agent_backtest.redaction import redact
from agent_backtest.replaying.budget import Budget
from agent_backtest.replaying.cached import CachedAnswers, record_answers
from agent_backtest.replaying.engine import ReplayOutcome, run_jobs
from agent_backtest.replaying.events import ReplayHooks
from agent_backtest.replaying.jobs import Job, iter_jobs, model_of
from agent_backtest.replaying.plan import ReplayPlan, move_units_into
from agent_backtest.runs import (
    ResultRecord,
    ResultWriter,
    RunDirectory,
    RunManifest,
    private_atomic_writer,
    read_results,
)
from agent_backtest.runs.call_log import CallLog
from agent_backtest.runs.manifest import PatchSettings, ReplaySettings, RunCounts, RunStatus
from agent_backtest.runs.provenance import collect_provenance
from agent_backtest.runs.settle import settle
from agent_backtest.runs.signals import stop_on_signals
from agent_backtest.units.io import read_placed_units

if TYPE_CHECKING:
    from agent_backtest.patch import Patch

# How often run.json takes the live call counts while the run goes, so a killed run keeps them.
COUNTS_EVERY_SECONDS = 1.0


@dataclass
class ReplayResult:
    """How a start of the run ended."""

    directory: RunDirectory
    manifest: RunManifest
    outcome: ReplayOutcome
    todo: int

    @property
    def status(self) -> RunStatus:
        """The run's status after this start."""
        return self.manifest.status


def start_run(plan: ReplayPlan) -> RunManifest:
    """Lay the planned run into its directory (created by the caller): units, patch, run.json."""
    directory = plan.directory
    move_units_into(plan)
    if plan.patch is not None:
        with private_atomic_writer(directory.patch_path) as handle:
            handle.write(plan.patch.to_json())
    if plan.coverage is not None:
        with private_atomic_writer(directory.patch_coverage_path) as handle:
            handle.write(plan.coverage.to_json())
    manifest = RunManifest.new(
        plan.settings,
        inputs=plan.inputs,
        labels=plan.labels,
        units=plan.units,
        sessions=plan.sessions,
        readers=plan.readers,
        status="completed" if plan.settings.dry_run else "running",
    )
    manifest.save(directory.manifest_path)
    return manifest


def replay_run(
    directory: RunDirectory,
    manifest: RunManifest,
    config: ModelConfig,
    refs: set[ModelRef],
    done: set[tuple[str, int]],
    credential_command: str | None = None,
    hooks: ReplayHooks | None = None,
    on_answer: Callable[[Job, ResultRecord], Awaitable[None]] | None = None,
    executor: ExecutorKind = "local",
    ray_address: str | None = None,
    budget: Budget | None = None,
    answers: CachedAnswers | None = None,
) -> ReplayResult:
    """Send every (unit, repeat) of the run not in ``done`` to the models ``refs`` (as the plan
    or :func:`prepare_resume` found them), then settle the run's status; ``on_answer`` is
    awaited with each job and its record as it is written. The calls are made by ``executor``
    (``ray``: on the Ray cluster at ``ray_address``, or one started here). With a ``budget``,
    no call is sent once the run's spend reaches it (see :mod:`.budget`). The ``answers`` the
    plan found in the cache are recorded first, and their units not read again."""
    hooks = hooks or ReplayHooks()
    settings = manifest.config
    patch = load_run_patch(directory, settings.patch) if settings.patch else None
    # Every call the run sent, those of a start killed between two saves of run.json included.
    calls = CallLog(directory.calls_path, "candidate", manifest.candidate_counts.calls)
    base_counts = manifest.candidate_counts.model_copy(update={"calls": calls.count})
    counters = CallCounters(on_call=calls.append)
    credentials = CredentialCommand(credential_command) if credential_command else None
    clients = open_clients(
        settings.candidate, refs, config, counters, credentials, lambda: _golden(directory)
    )
    todo = manifest.units * settings.k - len(done)
    try:
        pool = open_executor(
            executor, ray_address, settings.candidate, clients, config, credential_command,
            lambda: _golden(directory),
        )  # fmt: skip
    except BaseException:  # nothing was sent: the run is as it was, to be resumed
        asyncio.run(close_clients(clients))
        calls.close()
        manifest.counts["candidate"] = base_counts
        _settle(directory, manifest, "interrupted")
        raise
    used = ("ray",) if executor == "ray" else ()
    provenance = collect_provenance(manifest.roles, config, {"candidate": refs}, used)
    manifest.provenance.append(provenance)
    manifest.max_cost_usd = float(budget.limit) if budget is not None else None
    hooks.on_start(todo, len(done))
    whole, answered = (answers.whole, done | answers.pairs) if answers else (set(), done)
    jobs = iter_jobs(
        read_placed_units(directory.units_path, whole), settings.candidate.model, config,
        settings.k, settings.seed, answered, patch,
    )  # fmt: skip
    # The records this start writes are tallied as they are written, so the status is settled
    # without reading results.jsonl back; a resume's earlier records are tallied first.
    tally = ResultTally(read_results(directory.results_path) if done else ())
    on_result = _tallied(
        tally,
        _saving_counts(directory, manifest, base_counts, counters, _with_progress(hooks, pool)),
    )
    writer = ResultWriter(directory.results_path)
    if settings.batch is not None:
        from agent_backtest.replaying.batch import send_batches  # a batch run's only

        sending = send_batches(directory, manifest, clients, jobs, writer, on_result, on_answer)
    else:
        recorded = _recording(answers, directory, on_result, counters)
        sending = _send(
            jobs, clients, pool, settings, writer, on_result, on_answer, budget, recorded
        )
    try:
        outcome = asyncio.run(sending)
    except BaseException as exc:  # a second Ctrl-C abandons the calls in flight; else a crash
        manifest.counts["candidate"] = base_counts.plus(counters.as_dict())
        stopped = isinstance(exc, KeyboardInterrupt | Terminated)
        _settle(directory, manifest, "interrupted" if stopped else "failed")
        raise
    finally:
        writer.close()
        pool.close()
        calls.close()
    manifest.counts["candidate"] = base_counts.plus(counters.as_dict())
    if outcome.interrupted and budget is not None and budget.reached:
        manifest.stop_reason = "budget"
    _settle(directory, manifest, "interrupted" if outcome.interrupted else None, tally)
    if outcome.terminated:  # the run is saved; the process was asked to end, not to score
        raise Terminated
    result = ReplayResult(directory, manifest, outcome, todo)
    hooks.on_finish(result)
    return result


def prepare_resume(
    directory: RunDirectory, overrides: dict[str, Any]
) -> tuple[RunManifest, ModelConfig, set[ModelRef]]:
    """The run to resume with its call settings changed, and every model it will call checked;
    nothing is written."""
    manifest = directory.load_manifest()
    settings = manifest.config
    candidate = settings.candidate.with_settings(**overrides)
    settings.roles["candidate"] = candidate
    config = load_model_config(Path(settings.config_file) if settings.config_file else None)
    patch = load_run_patch(directory, settings.patch) if settings.patch else None
    refs = {
        model_of(unit, patch.apply(unit) if patch else None, candidate.model, config)
        for unit in directory.read_units()
    }
    check_role(candidate, refs, config)
    return manifest, config, refs


def begin_resume(
    directory: RunDirectory, manifest: RunManifest, retry_errors: bool, repair: bool = False
) -> set[tuple[str, int]]:
    """Mark the run running again; the pairs already done (results.jsonl rewritten clean: no
    torn line, one record per pair and, with ``retry_errors``, no errors; ``repair`` drops
    torn lines in the middle too)."""
    done = directory.settle_results(retry_errors, repair)
    manifest.attempts_of_run += 1
    manifest.status = "running"
    manifest.stop_reason = None
    manifest.finished_at = None
    manifest.save(directory.manifest_path)
    return done


def load_run_patch(directory: RunDirectory, settings: PatchSettings) -> Patch:
    """The patch a run was started with; its ops must be the ones run.json names."""
    path = directory.patch_path
    if not path.exists():
        raise InputError(
            path,
            None,
            f"missing: run.json says the run applies the patch {settings.file}, and its ops "
            "are kept in this file",
        )
    from agent_backtest.patch import load_patch  # a patched run's only

    patch = load_patch(path)
    if patch.op_ids() != settings.ops:
        raise InputError(
            path,
            None,
            f"its ops {patch.op_ids()} are not the run's {settings.ops} (run.json): the file "
            "was edited after the run started",
        )
    return patch


def _golden(directory: RunDirectory) -> Iterator[Any]:
    return ((unit.request, unit.golden) for unit in directory.read_units())


def _recording(
    answers: CachedAnswers | None,
    directory: RunDirectory,
    on_result: Callable[[ResultRecord], None],
    counters: CallCounters,
) -> Callable[[], int]:
    """What records the ``answers`` the plan found in the cache (they cost nothing: no budget
    is asked) and says how many there were."""
    if answers is None:
        return lambda: 0
    return lambda: record_answers(answers, directory.results_path, on_result, counters)


def _with_progress(hooks: ReplayHooks, executor: Executor) -> Callable[[ResultRecord], None]:
    """``hooks.on_result``, then ``hooks.on_progress`` with the executor's status."""

    def report(record: ResultRecord) -> None:
        hooks.on_result(record)
        hooks.on_progress(executor.status)

    return report


def _saving_counts(
    directory: RunDirectory,
    manifest: RunManifest,
    base: RunCounts,
    counters: CallCounters,
    on_result: Callable[[ResultRecord], None],
) -> Callable[[ResultRecord], None]:
    """``on_result``, and run.json rewritten with the live counts at most once a second, when
    they changed. These saves are not fsync-ed: each blocks the event loop, and answers with
    it, and a fsync can take tens of milliseconds; a killed process still leaves run.json
    whole, and the settled run.json at the end is fsync-ed."""
    last, saved = time.monotonic(), counters.changes

    def save_and_report(record: ResultRecord) -> None:
        nonlocal last, saved
        if counters.changes != saved and time.monotonic() - last >= COUNTS_EVERY_SECONDS:
            manifest.counts["candidate"] = base.plus(counters.as_dict())
            manifest.save(directory.manifest_path, sync=False)
            last, saved = time.monotonic(), counters.changes
        on_result(record)

    return save_and_report


async def _send(
    jobs: Iterator[Job],
    clients: dict[ModelRef, ModelClient],
    executor: Executor,
    settings: ReplaySettings,
    writer: ResultWriter,
    on_result: Callable[[ResultRecord], None],
    on_answer: Callable[[Job, ResultRecord], Awaitable[None]] | None,
    budget: Budget | None = None,
    recorded: Callable[[], int] = lambda: 0,
) -> ReplayOutcome:
    """The answers the plan found in the cache recorded (``recorded``), then every job sent."""
    with stop_on_signals() as stop:
        if budget is not None:
            on_result = _within(budget, stop.asked, on_result)
        try:
            already = recorded()
            concurrency = settings.candidate.concurrency
            outcome = await run_jobs(
                jobs, clients, writer, concurrency, stop.asked, on_result, on_answer, executor
            )
            outcome.finished += already
            outcome.terminated = stop.terminated
            return outcome
        finally:
            await close_clients(clients)


def _within(
    budget: Budget, stop: asyncio.Event, on_result: Callable[[ResultRecord], None]
) -> Callable[[ResultRecord], None]:
    """``on_result``, after pricing the answer: the run stops taking calls at the budget."""

    def priced(record: ResultRecord) -> None:
        if budget.add(record):
            stop.set()
        on_result(record)

    return priced


class ResultTally:
    """What a run's status is settled from: its records, answers, an example of each error
    kind, and per unit its records and timeouts."""

    def __init__(self, records: Iterable[ResultRecord] = ()) -> None:
        self.answered = 0
        self.examples: dict[str, str] = {}
        self.repeats: Counter[str] = Counter()
        self.timeouts: Counter[str] = Counter()
        for record in records:
            self.add(record)

    def add(self, record: ResultRecord) -> None:
        """Count one record."""
        self.repeats[record.unit_id] += 1
        error = record.error
        if error is None:
            self.answered += 1
            return
        if error.kind not in self.examples:
            self.examples[error.kind] = redact(error.detail)[:300]
        if error.kind == "timeout":
            self.timeouts[record.unit_id] += 1


def _tallied(
    tally: ResultTally, on_result: Callable[[ResultRecord], None]
) -> Callable[[ResultRecord], None]:
    """``on_result``, with each record counted in ``tally`` first."""

    def counted(record: ResultRecord) -> None:
        tally.add(record)
        on_result(record)

    return counted


def _settle(
    directory: RunDirectory,
    manifest: RunManifest,
    ended: RunStatus | None,
    tally: ResultTally | None = None,
) -> None:
    """The run's honest status from all its results (unless it ``ended`` early), with an
    example of each error kind and the units that timed out on every repeat; run.json saved.
    Without a ``tally`` of every record, results.jsonl is read to make one."""
    if tally is None:
        tally = ResultTally(read_results(directory.results_path))
    manifest.error_examples = dict(sorted(tally.examples.items()))
    manifest.timed_out_units = sorted(
        unit for unit, count in tally.timeouts.items() if count == tally.repeats[unit]
    )
    records = tally.repeats.total()
    settle(manifest, directory.manifest_path, ended, records, records - tally.answered)
