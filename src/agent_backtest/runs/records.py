"""``results.jsonl``: one record per (unit, repeat), appended and flushed as each call ends.

A process killed mid-write can leave a torn last line; reading ignores it (and resume rewrites
the file without it), so a record is either whole or absent. A torn line in the middle (a file
cut and appended to again) stops every reader until ``abt replay --resume RUN --repair``
rewrites the file with its whole records.

One record per (unit, repeat): the run's lock keeps a second writer out, and a file that holds
two records of one pair all the same (written before the lock, or merged by hand) is read with
the first whole record of each pair; the others are counted, and a :class:`DuplicateResults`
warning says how many were left out, so nothing is scored twice.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Literal

import orjson
from pydantic import Field, ValidationError

from agent_backtest.errors import InputError
from agent_backtest.input_files import check_json_integers, has_long_number, open_binary
from agent_backtest.record_model import StrictModel, TaggedRecord, schema_tag
from agent_backtest.runs.offsets import UnitOffsets, unit_key
from agent_backtest.runs.record_log import LogWriter, RecordLog
from agent_backtest.trace import LLMResponse, dump_record

RESULT_SCHEMA = "abt.result/1"


class CallError(StrictModel):
    """An infrastructure error: the call gave no answer. Never scored as a disagreement."""

    kind: str = Field(
        description="http_401, http_429, http_4xx, http_5xx, timeout, connection, "
        "malformed_response, context_length (a request longer than a local model's context) "
        "or batch_expired (a batch request the provider did not run within the batch's window)."
    )
    detail: str
    status: int | None = None


class AnswerRecord(TaggedRecord):
    """A line of results.jsonl or scores.jsonl: a record of one answer, a unit on one repeat.

    Each kind narrows ``schema_`` to its own tag; the answer's key follows it on every line."""

    schema_: str = Field(alias="schema")
    unit_id: str
    repeat: int
    session_id: str


class ResultRecord(AnswerRecord):
    """What the candidate did with one unit on one repeat."""

    schema_: Literal["abt.result/1"] = schema_tag(RESULT_SCHEMA)
    model: str = Field(description="provider/model that was asked.")
    seed: int | None = None
    request_sha: str = Field(description="sha256 of the payload exactly as sent.")
    adjustments: list[str] = Field(
        default_factory=list, description="What was removed or changed for the target."
    )
    response: LLMResponse | None = None
    error: CallError | None = None
    latency_ms: float | None = Field(
        default=None,
        description="Service time of the answering attempt; None for cache hits and errors.",
    )
    attempts: int = Field(description="Calls sent for this record (0 for a cache hit).")
    cache_hit: bool = False
    base_request_sha: str | None = Field(
        default=None,
        description="Patched runs: sha256 of the payload the unit's unpatched "
        "request would have been sent as (same model and seed); equals request_sha when no op "
        "changed the unit.",
    )
    patch_ops: list[str] | None = Field(
        default=None, description="Patched runs: ids of the ops that changed this unit's request."
    )
    removed_tools: list[str] | None = Field(
        default=None, description="Patched runs: tools the patch removed from this unit's request."
    )

    @property
    def key(self) -> tuple[str, int]:
        """(unit_id, repeat): what pairs results across runs."""
        return self.unit_id, self.repeat


class DuplicateResults(UserWarning):
    """A results file holds more than one record of a (unit, repeat); only the first is read."""


def results_log(path: Path) -> RecordLog[ResultRecord]:
    """results.jsonl as a record log: one record per (unit, repeat), the first one wins."""
    broken = _broken_message(path)
    return RecordLog(path, ResultRecord, lambda record: record.key, broken=lambda _: broken)


def read_results(path: Path, repair: bool = False) -> Iterator[ResultRecord]:
    """The whole records of a results file, the first of each (unit, repeat) only, read a line
    at a time.

    A torn last line (a killed writer) is left out; a torn line elsewhere is an
    :class:`InputError`, unless ``repair``, which leaves out every line that is not a record.
    """
    log = results_log(path)
    yield from log.read(repair)
    _warn_of_duplicates(path, log.repeats)


class ResultIndex:
    """Where each (unit, repeat)'s first record starts in a results file: a reader can then
    take a run's results unit by unit, in any order, without holding them.

    Building it reads each line as JSON only; a record is validated when it is read, so a
    line that is JSON but no record fails there, naming its line, as :func:`read_results`
    would have.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offsets = UnitOffsets()
        self.models: set[str] = set()  # the models that answered
        self.records = 0  # the (unit, repeat) pairs with a record
        self._handle: BinaryIO | None = None
        if path.exists():
            self._scan()

    def _scan(self) -> None:
        duplicates = 0
        offset = 0
        with open_binary(self.path, "run file") as handle:
            for number, line in enumerate(handle, start=1):
                start, offset = offset, offset + len(line)
                key = self._key(number, line)
                if key is None:
                    continue
                try:
                    added = self.offsets.add(*key, start)
                except ValueError:  # a repeat no run has
                    raise _not_a_record(self.path, number) from None
                self.records += added
                duplicates += not added
        _warn_of_duplicates(self.path, duplicates)

    def _key(self, number: int, line: bytes) -> tuple[str, int] | None:
        """The (unit, repeat) of one line; None for a blank or torn last line."""
        if not line.strip():
            return None
        if not line.endswith(b"\n"):  # the last line: validated now, torn when it is no record
            record = _record(self.path, number, line)
            if record is None:
                return None
            self.models.add(record.model)
            return record.key
        try:
            data = orjson.loads(line)
            self.models.add(str(data["model"]))
            return str(data["unit_id"]), int(data["repeat"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            raise _not_a_record(self.path, number) from None

    def get(self, unit_id: str, repeat: int) -> ResultRecord | None:
        """The record of (``unit_id``, ``repeat``), read from the file; None when there is none."""
        for known, offset in self.offsets.of(unit_key(unit_id)):
            if known == repeat:
                return self._read(offset)
        return None

    def of_unit(self, unit_id: str) -> list[ResultRecord]:
        """The records of ``unit_id``, by repeat, read from the file."""
        return [self._read(offset) for _, offset in self.offsets.of(unit_key(unit_id))]

    def _read(self, offset: int) -> ResultRecord:
        if self._handle is None:
            self._handle = open_binary(self.path, "run file")
        self._handle.seek(offset)
        line = self._handle.readline()
        if has_long_number(line):  # rare, and the line's number is counted only to refuse it
            try:
                check_json_integers(line, self.path)
            except InputError:
                check_json_integers(line, self.path, f"line {self._line_number(offset)}")
        try:  # parsed and validated in one pass, with no dict of the line built first
            return ResultRecord.model_validate_json(line)
        except ValidationError:
            raise _not_a_record(self.path, self._line_number(offset)) from None

    def _line_number(self, offset: int) -> int:
        with open_binary(self.path, "run file") as handle:
            return handle.read(offset).count(b"\n") + 1

    def detached(self) -> ResultIndex:
        """The same index for another process: it opens the file for itself (a handle shared
        across a fork shares its position, so two readers would move each other's)."""
        twin = copy.copy(self)
        twin._handle = None
        return twin

    def close(self) -> None:
        """Close the file, if a record was read."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _record(path: Path, number: int, line: bytes) -> ResultRecord | None:
    """The record of the last line, which has no newline after it; None when it is torn."""
    try:
        return ResultRecord.model_validate(orjson.loads(line))
    except (orjson.JSONDecodeError, ValidationError):
        return None


def _not_a_record(path: Path, number: int) -> InputError:
    return InputError(path, f"line {number}", _broken_message(path))


def _broken_message(path: Path) -> str:
    """What a broken line of ``path`` is, and the command that keeps every whole record."""
    return (
        "not a result record (a torn line, or the file was edited); keep every whole "
        f"record with: abt replay --resume {path.parent} --repair"
    )


def _warn_of_duplicates(path: Path, duplicates: int) -> None:
    if duplicates:
        warnings.warn(
            f"{path}: {duplicates} more records of a (unit, repeat) already recorded were left "
            "out (the first of each is read); abt replay --resume rewrites the file with one "
            "record each",
            DuplicateResults,
            stacklevel=3,
        )


class ResultWriter(LogWriter[ResultRecord]):
    """Appends records to results.jsonl (mode 0600), each flushed to the OS at once.

    Not fsync-ed: a replay appends thousands of records, and a kill of the process (what a
    resume recovers from) cannot lose a flushed one."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, dump_record, sync=False)
