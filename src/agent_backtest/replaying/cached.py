"""Answers the response cache already holds, found while a replay is planned.

A rerun whose answers are cached would otherwise read and validate every unit twice (to plan,
then to send) and build each call's payload and cache key on the way to the cache. Instead the
plan looks each (unit, repeat) up in the candidate's cache while it holds the unit: a hit becomes
its result record there and then, kept in a private temporary file, and is handed with its unit
to ``on_answer`` (to score it). The run writes those records first and reads back from
units.jsonl only the units with a repeat left to send.

Looking up writes nothing: a cache not made yet holds no answer and is not made here, and the
records reach results.jsonl only once the plan has passed every check.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from agent_backtest.errors import UserError
from agent_backtest.providers import CallCounters, ModelClient, ModelConfig, ModelRef
from agent_backtest.providers.cache import ResponseCache
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.factory import build_provider
from agent_backtest.providers.roles import call_policy, close_clients
from agent_backtest.replaying.engine import result_record
from agent_backtest.replaying.jobs import Job
from agent_backtest.runs import ResultRecord
from agent_backtest.trace import dump_record
from agent_backtest.units import Unit

if TYPE_CHECKING:  # the patch types, for annotations: a patch loads only for a patched run
    from agent_backtest.patch.ops import PatchedRequest

WRITE_BUFFER = 1 << 16  # bytes of records gathered before each write, and copied at a time


class CachedAnswers:
    """The (unit, repeat) pairs of a planned replay that the candidate's cache answers, and
    their records; :meth:`discard` once they are written, or if the run will not be."""

    def __init__(
        self,
        role: ModelRole,
        config: ModelConfig,
        cache: ResponseCache,
        k: int,
        seed: int,
        on_answer: Callable[[int, Unit, ResultRecord], None] | None = None,
    ) -> None:
        self.role, self.config, self.cache = role, config, cache
        self.k, self.seed, self.on_answer = k, seed, on_answer
        self._clients: dict[ModelRef, ModelClient | None] = {}
        self.whole: set[int] = set()
        """Places in units.jsonl of the units with every repeat answered."""
        self.pairs: set[tuple[str, int]] = set()
        """The (unit, repeat) pairs answered of units with a repeat left to send."""
        self.count = 0
        # unnamed (mode 0600, gone with the process): a crash leaves no answers behind
        self._spool = tempfile.TemporaryFile(prefix="abt-answers-", buffering=WRITE_BUFFER)  # noqa: SIM115
        self._closed = False

    @classmethod
    def open(
        cls,
        role: ModelRole,
        config: ModelConfig,
        k: int,
        seed: int,
        on_answer: Callable[[int, Unit, ResultRecord], None] | None = None,
    ) -> CachedAnswers | None:
        """The look-up of ``role``'s answers; None when the role keeps no cache, or it has
        not been made."""
        cache = ResponseCache.existing(Path(role.cache_dir)) if role.cache_dir else None
        if cache is None:
            return None
        try:
            return cls(role, config, cache, k, seed, on_answer)
        except BaseException:
            cache.close()
            raise

    def look_up(
        self, position: int, unit: Unit, model: ModelRef, patched: PatchedRequest | None
    ) -> int:
        """Answer each repeat of ``unit`` (at ``position`` in units.jsonl, sent to ``model``,
        as ``patched``) that the cache can; how many it answered."""
        client = self._client(model)
        if client is None:
            return 0
        answered = []
        for repeat in range(self.k):
            job = Job(unit, repeat, self.seed + repeat, model, patched, position)
            outcome = client.cached(job.request, model.model, job.seed)
            if outcome is None:
                continue
            base_sha = None
            if patched is not None:  # the hash the unpatched request would have been sent as
                base_sha = client.prepare(unit.request, model.model, job.seed)[2]
            record = result_record(job, outcome, base_sha)
            self._spool.write(dump_record(record) + b"\n")
            answered.append(repeat)
            if self.on_answer is not None:
                self.on_answer(position, unit, record)
        self.count += len(answered)
        if len(answered) == self.k:
            self.whole.add(position)
        else:
            self.pairs.update((unit.unit_id, repeat) for repeat in answered)
        return len(answered)

    def _client(self, model: ModelRef) -> ModelClient | None:
        """The client of ``model``, opened as the run opens it (the same payloads, so the same
        keys); None for a model that cannot be reached: the plan's check of the models after
        the units are read says why, and the run is not made."""
        if model not in self._clients:
            try:
                self._clients[model] = _client(self.role, self.config, model, self.cache)
            except UserError:
                self._clients[model] = None
        return self._clients[model]

    def close(self) -> None:
        """Stop looking up: the records are on disk, the cache and the connections (never
        used) closed."""
        self._closed = True
        self._spool.flush()
        asyncio.run(close_clients([c for c in self._clients.values() if c is not None]))
        self.cache.close()

    def records(self) -> Iterator[ResultRecord]:
        """The records of the answered pairs, in unit order."""
        self._spool.seek(0)
        for line in self._spool:
            yield ResultRecord.model_validate_json(line)

    def copy_records(self, out: BinaryIO) -> None:
        """Write the records' lines, as spooled, to ``out``."""
        self._spool.seek(0)
        shutil.copyfileobj(self._spool, out, WRITE_BUFFER)

    def discard(self) -> None:
        """Drop the records' temporary file (the cache and clients are closed first if the
        look-up was not)."""
        if not self._closed:
            self.close()
        self._spool.close()


def _client(
    role: ModelRole, config: ModelConfig, ref: ModelRef, cache: ResponseCache
) -> ModelClient:
    """A client of ``ref`` to look answers up in ``cache``; it sends nothing."""
    provider = build_provider(
        ref, config, role.base_url, role.concurrency, tuple, role.api_key_env, role.parameter,
        role.max_answer_bytes,
    )  # fmt: skip
    return ModelClient(provider, call_policy(role), cache)


def record_answers(
    answers: CachedAnswers,
    results: Path,
    on_result: Callable[[ResultRecord], None],
    counters: CallCounters,
) -> int:
    """Append the records of ``answers`` to the results file ``results`` (the lines the run's
    writer would write, in one go rather than one flushed line each), then hand each to
    ``on_result``, counted as a cache hit; how many were recorded."""
    fd = os.open(results, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as handle:
        answers.copy_records(handle)
    for record in answers.records():
        counters.count_cache_hit()
        on_result(record)
    return answers.count
