"""An append-only log of records: one JSON record a line, each on disk before the next is taken.

Every job keeps its records this way (replay's results, simulate's conversations and verdicts,
bench's episodes and grades), under one rule for a key recorded more than once:

    **the first whole record of a key wins.** A later record of the same key is left out when
    the log is read, and a rewrite keeps only the first. A job that must replace a record (a
    verdict judged again) rewrites the log without the old record before it appends the new one.

A writer killed mid-line leaves a torn last line: reading leaves it out, and a resume rewrites
the log clean. A broken line anywhere else is no accident of a kill; reading stops there with the
file and the line number.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, Generic, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from agent_backtest.errors import InputError
from agent_backtest.input_files import open_binary
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.trace import dump_record

Record = TypeVar("Record", bound=BaseModel)


class RecordLog(Generic[Record]):
    """One log file of ``model`` records, keyed by ``key``; see the module docstring."""

    def __init__(
        self,
        path: Path,
        model: type[Record],
        key: Callable[[Record], Hashable],
        *,
        broken: Callable[[str], str] | None = None,
        line: Callable[[Record], bytes] = dump_record,
    ) -> None:
        self.path = path
        self.model = model
        self.key = key
        self._broken = broken or (lambda detail: f"not a {model.__name__} record: {detail}")
        self._line = line
        self.repeats = 0

    def read(self, repair: bool = False) -> Iterator[Record]:
        """The first whole record of each key, in file order, read a line at a time.

        After the last record, :attr:`repeats` holds how many later records of a key already
        read were left out. Torn and broken lines are treated as :meth:`records` treats them.
        """
        self.repeats = 0
        seen: set[Hashable] = set()
        for record in self.records(repair):
            key = self.key(record)
            if key in seen:
                self.repeats += 1
                continue
            seen.add(key)
            yield record

    def records(self, repair: bool = False) -> Iterator[Record]:
        """Every whole record in file order, repeats of a key included.

        A torn last line is left out; a broken line elsewhere is an :class:`InputError` naming
        it, unless ``repair``, which leaves out every line that is not a record.
        """
        if not self.path.exists():
            return
        with open_binary(self.path, "run file") as handle:
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                record = self._record(number, text, repair)
                if record is not None:
                    yield record

    def _record(self, number: int, text: bytes, repair: bool) -> Record | None:
        """The record of one line; None for a line left out (torn at the end, or ``repair``)."""
        try:
            return self.model.model_validate(orjson.loads(text))
        except (orjson.JSONDecodeError, ValidationError) as exc:
            # a last line with no newline after it was being written when its writer was killed
            if not text.endswith(b"\n") or repair:
                return None
            detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise InputError(self.path, f"line {number}", self._broken(detail)) from None

    def rewrite(self, records: Iterable[Record]) -> None:
        """Replace the log with exactly ``records``, atomically (mode 0600)."""
        with private_atomic_writer(self.path) as handle:
            handle.writelines(self._line(record) + b"\n" for record in records)

    def settle(self, repair: bool = False) -> list[Record]:
        """The log's records (as :meth:`read` gives them), with the file rewritten to hold
        exactly them: no torn line, one record per key. A missing log stays missing."""
        records = list(self.read(repair))
        if self.path.exists():
            self.rewrite(records)
        return records

    def open(self, sync: bool = True) -> LogWriter[Record]:
        """The log opened for appending (created with mode 0600)."""
        return LogWriter(self.path, self._line, sync)


class LogWriter(Generic[Record]):
    """Appends records to a log, each flushed (and with ``sync``, fsync-ed) before it returns."""

    def __init__(self, path: Path, line: Callable[[Record], bytes], sync: bool) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._handle: BinaryIO = os.fdopen(fd, "ab")
        self._line = line
        self._sync = sync

    def append(self, record: Record) -> None:
        """Write one record: once this returns, a kill of this process cannot lose it (and with
        ``sync``, neither can a crash of the machine)."""
        self._handle.write(self._line(record) + b"\n")
        self._handle.flush()
        if self._sync:
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        """Close the file."""
        self._handle.close()
