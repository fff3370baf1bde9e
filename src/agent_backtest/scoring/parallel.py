"""Scoring a run without a judge on several cores.

Without a judge, scoring is computation only: reading units and results, matching calls,
writing records. On a run of thousands of answers each core can take part of units.jsonl.
The file is cut into chunks of whole lines, dealt in turn to the processes (so each gets its
share of every part of the file, cheap and costly alike). Workers are forked once everything is
loaded, so they start at once; each writes its chunks' records, one chunk after another, to an
unnamed temporary file (mode 0600, gone with the processes) and says when each is done. The
parent scores its own chunks and copies the workers' in order, counting every record in the
summary as it goes: scores.jsonl and summary.json are byte for byte what one process writes.

A worker's error reaches the parent as it was raised (a bad gold file names its line), and the
first in unit order is the one reported, as a single process would report it. Ctrl-C stops the
parent, which stops the workers; nothing is written, and scoring again costs nothing paid.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

from agent_backtest.errors import UserError
from agent_backtest.runs.scores import ScoreRecord
from agent_backtest.trace import dump_record
from agent_backtest.units.io import Stretch

if TYPE_CHECKING:  # multiprocessing loads when a worker starts: most scoring needs none
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

MIN_ANSWERS_PER_WORKER = 2_500  # below this a worker costs more to start and merge than it saves
MAX_WORKERS = 8  # past this the parent's copying of their records is what takes the time
CHUNKS_PER_PROCESS = 16  # enough for each to get its share of a file whose units vary in cost
# What the parent spends on each record a worker scores, against scoring one: copying it (read,
# validated, counted: 37 µs on BFCL's answers, against about 300 µs to score one in a worker) and
# the 30 µs more each of its own answers takes, as the parent counts those too.
COPY_COST = 0.2

ScoreChunk = Callable[[Stretch], Iterator[ScoreRecord]]
"""The score records of the units of one stretch of units.jsonl."""
Write = Callable[[ScoreRecord, bytes | None], None]
"""Takes each record in unit order (with its JSON line, when it has one already)."""


def worker_count(requested: int | None, answers: int) -> int:
    """The processes to score ``answers`` with: ``requested``, else one per core this process
    may use, up to :data:`MAX_WORKERS` and one per :data:`MIN_ANSWERS_PER_WORKER` answers; one
    where processes cannot be forked."""
    if not can_fork():
        return 1
    if requested is not None:
        return requested
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, MAX_WORKERS, answers // MIN_ANSWERS_PER_WORKER))


def can_fork() -> bool:
    """True where this process can be forked safely: on Linux (elsewhere system libraries may
    not survive a fork, and spawning would load everything again), and while it runs no other
    thread (a lock one holds, in the allocator or a client library, would stay held in the
    worker: a replay that used Ray or a local model scores in one process)."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


def owners(chunks: int, count: int) -> list[int]:
    """Which process scores each of ``chunks`` (0: the parent), dealt in turn from the
    parent: while it copies one worker's chunk the others score theirs, so none waits.

    The parent takes fewer than a worker (:func:`parent_share`): it copies every other chunk
    too. Its chunks are spread evenly, the first always among them (it scores while the
    workers start).
    """
    share = parent_share(count)
    owner: list[int] = []
    taken = dealt = 0
    for index in range(chunks):
        if taken <= index * share:  # the parent is behind its share: this one is its
            owner.append(0)
            taken += 1
        else:
            owner.append(1 + dealt % (count - 1))
            dealt += 1
    return owner


def parent_share(count: int) -> float:
    """The share of the chunks the parent scores so that it finishes with the workers: its
    own chunks and copying all the others (at :data:`COPY_COST` each) take it as long as a
    worker's share takes the worker; none once copying alone keeps it busy."""
    if count == 1:
        return 1.0
    worker = 1 / (count - 1)  # a worker's share of what the parent does not score
    return max(0.0, (worker - COPY_COST) / (1 - COPY_COST + worker))


def score_in_order(chunks: list[Stretch], count: int, score: ScoreChunk, write: Write) -> None:
    """Score every chunk in ``count`` processes, each chunk by its :func:`owners`, and
    ``write`` every record in chunk order."""
    owner = owners(len(chunks), count)
    gc.freeze()  # the collector leaves what exists now alone: fewer pages copied in each worker
    started = [
        _Worker.start(p, [(i, chunks[i]) for i in range(len(chunks)) if owner[i] == p], score)
        for p in range(1, count)
    ]
    try:
        for index, chunk in enumerate(chunks):
            if owner[index] == 0:
                for record in score(chunk):
                    write(record, None)
            else:
                for record, line in started[owner[index] - 1].chunk(index):
                    write(record, line)
    finally:
        for worker in started:
            worker.stop()
        gc.unfreeze()


@dataclass
class _Worker:
    """One worker process, the pipe it reports on and the file its records are in."""

    process: BaseProcess
    report: Connection
    records: IO[bytes]
    read: int = 0  # bytes of its records copied so far

    @classmethod
    def start(cls, number: int, chunks: list[tuple[int, Stretch]], score: ScoreChunk) -> _Worker:
        """A worker scoring ``chunks`` (each with its index), started."""
        import multiprocessing

        context = multiprocessing.get_context("fork")
        receiver, sender = context.Pipe(duplex=False)
        records = tempfile.TemporaryFile()  # noqa: SIM115 -- closed by stop()
        process = context.Process(
            target=_work,
            args=(score, chunks, records.fileno(), sender),
            daemon=True,
            name=f"abt-score-{number}",
        )
        worker = cls(process, receiver, records)
        process.start()
        sender.close()  # the worker holds its end: a worker gone without a word is EOF
        return worker

    def chunk(self, index: int) -> Iterator[tuple[ScoreRecord, bytes]]:
        """The records of chunk ``index`` (the next of this worker's), once written."""
        try:
            done, outcome = self.report.recv()
        except EOFError:
            self.process.join()
            raise RuntimeError(
                f"a scoring worker stopped without finishing (exit code {self.process.exitcode})"
            ) from None
        if isinstance(outcome, UserError):
            raise outcome
        if isinstance(outcome, str):
            raise RuntimeError(f"a scoring worker failed:\n{outcome}")
        if done != index:
            raise RuntimeError(f"a scoring worker sent chunk {done} for chunk {index}")
        data = os.pread(self.records.fileno(), outcome, self.read)
        self.read += outcome
        for line in data.splitlines(keepends=True):
            yield ScoreRecord.model_validate_json(line), line

    def stop(self) -> None:
        """Stop the worker if it still runs, and close what it was given."""
        if self.process.is_alive():
            self.process.terminate()
        self.process.join()
        self.report.close()
        self.records.close()


def _work(
    score: ScoreChunk, chunks: list[tuple[int, Stretch]], records: int, report: Connection
) -> None:
    """A worker's whole life: score each chunk, append its records to the file, say so.

    Only the worker writes to the file, so its position is the worker's; the parent reads at
    offsets it counts itself.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent stops a worker it no longer needs
    try:
        for index, chunk in chunks:
            data = b"".join(dump_record(record) + b"\n" for record in score(chunk))
            view = memoryview(data)
            while view:
                view = view[os.write(records, view) :]
            report.send((index, len(data)))
    except UserError as exc:
        report.send((None, exc))
    except Exception:
        report.send((None, traceback.format_exc()))
    finally:
        report.close()
