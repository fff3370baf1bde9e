"""The replay engine: sends jobs with bounded concurrency and records each answer as it lands.

Each finished call is appended to results.jsonl before the next one is taken, so a crash loses
only calls still in flight. A stop request (Ctrl-C) stops taking new jobs and lets the calls in
flight finish and be recorded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from agent_backtest.executors import Executor, LocalExecutor, WorkersLost
from agent_backtest.providers import CallOutcome, ModelClient, ModelRef
from agent_backtest.replaying.jobs import Job
from agent_backtest.runs import CallError, ResultRecord, ResultWriter


@dataclass
class ReplayOutcome:
    """How the engine ended."""

    finished: int
    interrupted: bool
    terminated: bool = False
    """The stop was a SIGTERM: the process ends once the run is saved."""
    workers_lost: bool = False
    """The executor lost every worker: the jobs left were not sent."""


async def run_jobs(
    jobs: Iterable[Job],
    clients: Mapping[ModelRef, ModelClient],
    writer: ResultWriter,
    concurrency: int,
    stop: asyncio.Event,
    on_result: Callable[[ResultRecord], None] = lambda record: None,
    on_answer: Callable[[Job, ResultRecord], Awaitable[None]] | None = None,
    executor: Executor | None = None,
) -> ReplayOutcome:
    """Send every job (at most ``concurrency`` at once) until done or ``stop`` is set.

    Jobs are taken from the iterable one at a time, so units stream from disk. Each call is
    made by ``executor`` (by default, from this process through ``clients``); the records are
    written here. ``on_answer`` is awaited with each job and its record once the record is
    written (to score it there).
    """
    executor = executor or LocalExecutor(clients)
    pending: Iterator[Job] = iter(jobs)
    finished = 0
    exhausted = False
    unsent = 0

    async def worker() -> None:
        nonlocal finished, exhausted, unsent
        while not stop.is_set():
            job = next(pending, None)
            if job is None:
                exhausted = True
                return
            client = clients[job.model]
            try:
                outcome = await executor.answer(job)
            except WorkersLost:  # no one left to call: stop as for Ctrl-C, resumable
                unsent += 1
                stop.set()
                return
            base_sha = None
            if job.patched is not None:  # the hash the unpatched request would have been sent as
                base_sha = client.prepare(job.unit.request, job.model.model, job.seed)[2]
            record = result_record(job, outcome, base_sha)
            writer.append(record)
            finished += 1
            on_result(record)
            if on_answer is not None:
                await on_answer(job, record)

    workers = [asyncio.create_task(worker()) for _ in range(max(1, concurrency))]
    try:
        await asyncio.gather(*workers)
    finally:
        for task in workers:
            task.cancel()
    # Stopped with jobs left: interrupted (a peek settles the case where none were left).
    left = unsent > 0 or (not exhausted and next(pending, None) is not None)
    return ReplayOutcome(finished, interrupted=stop.is_set() and left, workers_lost=unsent > 0)


def result_record(
    job: Job, outcome: CallOutcome, base_request_sha: str | None = None
) -> ResultRecord:
    """The results.jsonl record of one job's outcome (and, in a patched run, the patch's part)."""
    error = None
    if outcome.error is not None:
        error = CallError(
            kind=outcome.error.kind, detail=outcome.error.detail, status=outcome.error.status
        )
    patched = job.patched
    return ResultRecord(
        unit_id=job.unit.unit_id,
        repeat=job.repeat,
        session_id=job.unit.session_id,
        model=str(job.model),
        seed=job.seed,
        request_sha=outcome.request_sha,
        adjustments=outcome.adjustments,
        response=outcome.response,
        error=error,
        latency_ms=outcome.latency_ms,
        attempts=outcome.attempts,
        cache_hit=outcome.cache_hit,
        base_request_sha=base_request_sha,
        patch_ops=list(patched.ops) if patched is not None else None,
        removed_tools=list(patched.removed_tools) if patched and patched.removed_tools else None,
    )
