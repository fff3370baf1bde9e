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

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_backtest.errors import InputError
from agent_backtest.trace import LLMResponse, dump_record

RESULT_SCHEMA = "abt.result/1"


class CallError(BaseModel):
    """An infrastructure error: the call gave no answer. Never scored as a disagreement."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(
        description="http_401, http_429, http_4xx, http_5xx, timeout, connection "
        "or malformed_response."
    )
    detail: str
    status: int | None = None


class ResultRecord(BaseModel):
    """What the candidate did with one unit on one repeat."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["abt.result/1"] = Field(default=RESULT_SCHEMA, alias="schema")
    unit_id: str
    repeat: int
    session_id: str
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


def read_results(path: Path, repair: bool = False) -> Iterator[ResultRecord]:
    """The whole records of a results file, the first of each (unit, repeat) only.

    A torn last line (a killed writer) is left out; a torn line elsewhere is an
    :class:`InputError`, unless ``repair``, which leaves out every line that is not a record.
    """
    if not path.exists():
        return
    lines = path.read_bytes().split(b"\n")
    seen: set[tuple[str, int]] = set()
    duplicates = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = ResultRecord.model_validate(orjson.loads(line))
        except (orjson.JSONDecodeError, ValidationError):
            if number == len(lines) or repair:  # the last line, with no newline after it: torn
                continue
            raise InputError(
                path,
                f"line {number}",
                "not a result record (a torn line, or the file was edited); keep every whole "
                f"record with: abt replay --resume {path.parent} --repair",
            ) from None
        if record.key in seen:
            duplicates += 1
            continue
        seen.add(record.key)
        yield record
    if duplicates:
        warnings.warn(
            f"{path}: {duplicates} more records of a (unit, repeat) already recorded were left "
            "out (the first of each is read); abt replay --resume rewrites the file with one "
            "record each",
            DuplicateResults,
            stacklevel=2,
        )


class ResultWriter:
    """Appends records to results.jsonl (mode 0600), each flushed to the OS at once."""

    def __init__(self, path: Path) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._handle: BinaryIO = os.fdopen(fd, "ab")

    def append(self, record: ResultRecord) -> None:
        """Write one record and flush: once this returns, a kill cannot lose it."""
        self._handle.write(dump_record(record) + b"\n")
        self._handle.flush()

    def close(self) -> None:
        """Close the file."""
        self._handle.close()
