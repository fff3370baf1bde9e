"""The batch executor: a replay's calls sent through the providers' batch APIs (``--batch``).

The run is planned as for live calls; the (unit, repeat) pairs with no result are answered from
the response cache where it can, and the rest sent in batches, one model per batch, split to the
provider's limits. Each batch is recorded in run.json the moment the provider accepts it, before
it is polled, so a run stopped at any point resumes by polling the batches it made and never
sends their requests again. Answers are recorded through the same result records and cache as
live answers; per-request errors keep the kinds a live call would have had.

What a resume does, in order: it polls every batch run.json holds that was not collected yet and
records its results; it answers what it can from the cache; then it sends what is still to do
(the requests of a batch that failed or was cancelled, and with ``--retry-errors`` those that
ended in an error, expired ones included) in new batches. Only the moment between the provider
accepting a batch and run.json recording it is not covered: a kill exactly then leaves a batch
the run does not know of, and a resume sends its requests again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from agent_backtest.errors import TERMINATION, Terminated, UserError
from agent_backtest.providers import (
    CallOutcome,
    ModelClient,
    ModelConfig,
    ModelRef,
    ProviderError,
    cache_key,
    parse_model_ref,
)
from agent_backtest.providers.batches import (
    BATCH_TYPES,
    BatchAnswer,
    BatchAPI,
    BatchLimits,
    Submitted,
    batch_api,
    chunks,
)
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.roles import close_clients
from agent_backtest.replaying.engine import ReplayOutcome, result_record
from agent_backtest.replaying.jobs import Job
from agent_backtest.runs import ResultRecord, ResultWriter, RunDirectory, RunManifest, now
from agent_backtest.runs.manifest import BatchJob, BatchLog, BatchSettings

FIRST_POLL_SECONDS = 1.0  # then doubled after each look, up to the run's poll_seconds

Prepared = tuple[dict[str, Any], list[str], str]


def custom_id(job: Job) -> str:
    """The request's name in its batch: its unit's line in units.jsonl and its repeat (the rule
    run.json records), short and within every provider's custom_id alphabet."""
    return f"u{job.position}-r{job.repeat}"


def check_batch(role: ModelRole, refs: Iterable[ModelRef], config: ModelConfig) -> None:
    """Every model the run calls has a batch API, and no setting asks for what a batch cannot
    do; a user error otherwise (before anything is written)."""
    if role.rpm or role.tpm:
        raise UserError(
            "a batch's requests are paced by the provider, not by --rpm or --tpm: leave those out",
            "batch",
        )
    for ref in sorted(set(refs)):
        settings = config.provider(ref.provider, role.base_url, role.parameter)
        if settings.type not in BATCH_TYPES:
            raise UserError(
                f"{ref} has no batch API (provider type {settings.type}); batches are for "
                "openai/… and anthropic/… models: leave out --batch",
                "batch",
            )


async def send_batches(
    directory: RunDirectory,
    manifest: RunManifest,
    clients: Mapping[ModelRef, ModelClient],
    jobs: Iterable[Job],
    writer: ResultWriter,
    on_result: Callable[[ResultRecord], None],
    on_answer: Callable[[Job, ResultRecord], Awaitable[None]] | None,
) -> ReplayOutcome:
    """Answer ``jobs`` through batches (see the module docstring); interrupted when pairs are
    left to do (a batch that failed or was cancelled, or an endpoint that kept failing)."""
    settings = manifest.config.batch or BatchSettings()
    driver = _Batches(directory, manifest, clients, settings, writer, on_result, on_answer)
    try:
        await driver.run(jobs)
    finally:
        await driver.aclose()
        await close_clients(clients)
    return ReplayOutcome(driver.finished, interrupted=bool(driver.todo))


class _Batches:
    """One start of a batch replay: what is still to do, and the batches being waited for."""

    def __init__(
        self,
        directory: RunDirectory,
        manifest: RunManifest,
        clients: Mapping[ModelRef, ModelClient],
        settings: BatchSettings,
        writer: ResultWriter,
        on_result: Callable[[ResultRecord], None],
        on_answer: Callable[[Job, ResultRecord], Awaitable[None]] | None,
    ) -> None:
        self.directory = directory
        self.manifest = manifest
        self.log = manifest.batches = manifest.batches or BatchLog()
        self.clients = clients
        self.settings = settings
        self.writer = writer
        self.on_result = on_result
        self.on_answer = on_answer
        self.todo: dict[str, Job] = {}
        self.prepared: dict[str, Prepared] = {}
        self.finished = 0
        self._apis: dict[ModelRef, BatchAPI] = {}

    async def run(self, jobs: Iterable[Job]) -> None:
        """Collect the batches made before, answer from the cache, send the rest, collect it."""
        self.todo = {custom_id(job): job for job in jobs}
        self.log.problem = None
        try:
            for batch in [batch for batch in self.log.jobs if not batch.collected]:
                await self.collect(batch)
            await self.answer_from_cache()
            for batch in await self.submit():
                await self.collect(batch)
        except ProviderError as error:  # an endpoint that kept failing: a resume goes on
            self.log.problem = f"{error.kind}: {error.detail}"
            self.save()

    async def answer_from_cache(self) -> None:
        """Record the pairs the cache answers; prepare the payloads of the others."""
        for name, job in list(self.todo.items()):
            client = self.clients[job.model]
            prepared = client.prepare(job.request, job.model.model, job.seed)
            cached = None
            if client.cache is not None:
                key = cache_key(client.provider.name, client.provider.endpoint, prepared[2])
                cached = client.cache.get(key)
            if cached is None:
                self.prepared[name] = prepared
                continue
            client.counters.count_cache_hit()
            _, adjustments, sha = prepared
            del self.todo[name]
            await self.record(job, CallOutcome(cached, None, 0, None, True, sha, adjustments))

    async def submit(self) -> list[BatchJob]:
        """Send what is left, one model per batch and each batch within the limits; each one
        recorded in run.json as soon as it exists."""
        by_model: dict[ModelRef, list[str]] = {}
        for name, job in self.todo.items():
            by_model.setdefault(job.model, []).append(name)
        made = []
        for ref, names in sorted(by_model.items()):
            api = self.api(ref)
            lines = ((name, api.line(name, self.prepared[name][0])) for name in names)
            for chunk in chunks(lines, self._limits(api)):
                submitted = await api.submit(chunk)
                batch = BatchJob(
                    id=submitted.id,
                    model=str(ref),
                    input_file_id=submitted.input_file_id,
                    requests=len(chunk),
                    bytes=sum(len(line) + 1 for line in chunk),
                    status="submitted",
                    submitted_at=now(),
                )
                self.log.jobs.append(batch)
                self.save()
                made.append(batch)
        return made

    def _limits(self, api: BatchAPI) -> BatchLimits:
        size = self.settings.size
        if size is None or size >= api.limits.requests:
            return api.limits
        return BatchLimits(size, api.limits.bytes)

    async def collect(self, batch: BatchJob) -> None:
        """Wait for the batch to end, then record each of its results not recorded yet."""
        api = self.api(parse_model_ref(batch.model))
        submitted = Submitted(batch.id, batch.input_file_id)
        wait = min(FIRST_POLL_SECONDS, self.settings.poll_seconds)
        while True:
            try:
                state = await api.state(submitted)
            except ProviderError as error:
                if error.status != 404:
                    raise
                self._forget(batch, error)
                return
            if state.status != batch.status:
                batch.status = state.status
                self.save()
            if state.ended:
                break
            await asyncio.sleep(wait)
            if TERMINATION.is_set():  # asked to stop while waiting: the batch stays recorded
                raise Terminated
            wait = min(wait * 2, self.settings.poll_seconds)
        batch.answered = batch.errors = 0
        for answer in await api.answers(state) if state.result_files else []:
            await self._take(batch, answer)
        batch.left = batch.requests - batch.answered - batch.errors
        batch.problem, batch.ended_at, batch.collected = state.problem, now(), True
        self.save()

    def _forget(self, batch: BatchJob, error: ProviderError) -> None:
        """A batch the provider no longer knows (deleted, or made with another key's account):
        none of its requests has a result from it, so they are all still to do."""
        batch.status, batch.problem = "unknown to the provider", error.detail
        batch.answered = batch.errors = 0
        batch.left, batch.ended_at, batch.collected = batch.requests, now(), True
        self.save()

    async def _take(self, batch: BatchJob, answer: BatchAnswer) -> None:
        """Count one result of ``batch``, and record it when its pair is still to do (a
        collection cut short records only the rest when it is done again)."""
        if answer.response is None and answer.error is None:
            return  # cancelled before it ran: still to do
        if answer.response is not None:
            batch.answered += 1
        else:
            batch.errors += 1
        job = self.todo.get(answer.custom_id)
        if job is None or str(job.model) != batch.model:
            return
        del self.todo[answer.custom_id]
        client = self.clients[job.model]
        prepared = self.prepared.get(answer.custom_id)
        _, adjustments, sha = prepared or client.prepare(job.request, job.model.model, job.seed)
        client.counters.count_call()
        if answer.error is not None:
            client.counters.count_error(answer.error.kind)
        else:
            client.counters.count_usage(answer.response.usage if answer.response else None)
            self._store(client, sha, answer)
        outcome = CallOutcome(answer.response, answer.error, 1, None, False, sha, adjustments)
        await self.record(job, outcome)

    def _store(self, client: ModelClient, sha: str, answer: BatchAnswer) -> None:
        """Put an answer in the cache, as a live call does, so a rerun does not pay again."""
        if client.cache is None or answer.response is None:
            return
        key = cache_key(client.provider.name, client.provider.endpoint, sha)
        if not client.cache.put(key, answer.response):
            client.counters.count_cache_write_error()

    async def record(self, job: Job, outcome: CallOutcome) -> None:
        """Write the pair's result record, as the live engine does."""
        base_sha = None
        if job.patched is not None:  # the hash the unpatched request would have been sent as
            client = self.clients[job.model]
            base_sha = client.prepare(job.unit.request, job.model.model, job.seed)[2]
        record = result_record(job, outcome, base_sha)
        self.writer.append(record)
        self.finished += 1
        self.on_result(record)
        if self.on_answer is not None:
            await self.on_answer(job, record)

    def api(self, ref: ModelRef) -> BatchAPI:
        """The batch API of ``ref``'s provider (opened once)."""
        if ref not in self._apis:
            client = self.clients[ref]
            api = batch_api(client.provider, client.policy)
            if api is None:  # check_batch refused such a model before the run started
                raise ValueError(f"{ref} has no batch API")
            self._apis[ref] = api
        return self._apis[ref]

    def save(self) -> None:
        """run.json now, with the batches as they stand."""
        self.manifest.save(self.directory.manifest_path)

    async def aclose(self) -> None:
        """Close the batch APIs' connections."""
        for api in self._apis.values():
            await api.aclose()
