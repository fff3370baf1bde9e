"""Units JSONL files: telling one apart from a trace file, and reading it.

Replay reads a units file up to three times (the input, the run's units not answered from the
cache as they are sent, and again to score after a judge), so reading is kept to one validating
parse per line, and this module leaves the trace readers (``formats/``) unimported: the commands
that only read runs do not pay for every reader.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

import orjson
from pydantic import ValidationError

from agent_backtest.errors import InputError
from agent_backtest.input_files import check_json_integers, checked_regular_file, open_binary
from agent_backtest.units.model import UNIT_SCHEMA, Unit


def is_units_file(path: Path) -> bool:
    """True when the file's first line is a unit record."""
    try:
        with path.open("rb") as handle:
            return f'"{UNIT_SCHEMA}"'.encode() in handle.readline()
    except (FileNotFoundError, IsADirectoryError):
        return False  # not a units file: the trace readers say what is wrong with it
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None


class Stretch(NamedTuple):
    """Lines of a file: those starting at byte ``start`` up to byte ``end``, the first of them
    numbered ``first_line`` (from 1, as in the whole file)."""

    start: int
    end: int
    first_line: int


READ_BUFFER = 1 << 16
"""Bytes read at a time: a units line is often 20 KB or more, and the default buffer of 8 KB
would take each line in several reads joined together (going through a file took twice as long)."""


def read_units_file(path: Path, stretch: Stretch | None = None) -> Iterator[Unit]:
    """The units of a units JSONL (or of one ``stretch`` of it), in order, read one line at a
    time; a line that is not a unit is an error naming its line in the file."""
    for _, unit in read_unit_lines(path, stretch):
        yield unit


def read_unit_lines(path: Path, stretch: Stretch | None = None) -> Iterator[tuple[bytes, Unit]]:
    """Each unit of ``path`` (as :func:`read_units_file` reads them) with the line it was read
    from, so a unit left unchanged can be written again without serialising it."""
    with open_binary(path, "units file", READ_BUFFER) as handle:
        position, end, first = stretch or (0, None, 1)
        handle.seek(position)
        for number, line in enumerate(handle, start=first):
            if end is not None and position >= end:
                return
            position += len(line)
            if not line.isspace():
                yield line, _unit(path, number, line)


def read_placed_units(path: Path, skip: Container[int] = ()) -> Iterator[tuple[int, Unit]]:
    """Each unit of a run's own units.jsonl with its place among the file's units (from 0),
    leaving out the places in ``skip`` without parsing their lines (units already dealt with).

    The run's units were read and checked as the run was planned, so their lines are not
    looked through again for integers beyond 64 bits. They are parsed ``PARSE_BATCH`` at a
    time: a replay takes its units one by one between the calls in flight, and a unit parsed
    there cost half as much again as one of a run of parses (measured on τ-bench units)."""
    with open_binary(path, "units file", READ_BUFFER) as handle:
        place = 0
        batch: list[tuple[int, int, bytes]] = []
        for number, line in enumerate(handle, start=1):
            if line.isspace():
                continue
            if place not in skip:
                batch.append((place, number, line))
            place += 1
            if len(batch) == PARSE_BATCH:
                yield from _parsed(path, batch)
                batch = []
        yield from _parsed(path, batch)


def _parsed(path: Path, batch: list[tuple[int, int, bytes]]) -> Iterator[tuple[int, Unit]]:
    """The units of ``batch`` (place, line number, line), all parsed before the first is
    given; a line that is not a unit is raised after the units before it, as one by one."""
    units: list[tuple[int, Unit]] = []
    error: InputError | None = None
    try:
        for place, number, line in batch:
            units.append((place, _unit(path, number, line, checked=True)))
    except InputError as exc:
        error = exc
    yield from units
    if error is not None:
        raise error


def stretches(path: Path, parts: int) -> list[Stretch]:
    """The file cut into ``parts`` stretches of whole lines, as many lines in each as can be
    (give or take one)."""
    size = checked_regular_file(path, "units file").st_size
    if parts == 1:  # the whole file: nothing to count
        return [Stretch(0, size, 1)]
    lines = _count_lines(path)
    wanted = [lines * part // parts for part in range(1, parts)]
    cuts = [0, *_line_offsets(path, wanted), size]
    firsts = [1, *(line + 1 for line in wanted)]
    return [
        Stretch(start, end, first)
        for (start, end), first in zip(pairwise(cuts), firsts, strict=True)
    ]


PARSE_BATCH = 16
"""Units of a run's own file parsed together (about a megabyte of τ-bench units held at once;
batches of a few hundred were slower again, not faster)."""

CHUNK = 1 << 20  # bytes read at a time when counting lines


def _count_lines(path: Path) -> int:
    """The lines of a file (a last line without a newline counted too)."""
    count, last = 0, b"\n"
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


def _line_offsets(path: Path, lines: list[int]) -> list[int]:
    """Where each of ``lines`` (0-based line numbers, in order) starts; the file's size for
    a line past its end."""
    offsets: list[int] = []
    seen = 0  # newlines before the chunk
    position = 0
    with path.open("rb") as handle:
        while len(offsets) < len(lines) and (chunk := handle.read(CHUNK)):
            in_chunk = chunk.count(b"\n")
            while len(offsets) < len(lines) and lines[len(offsets)] <= seen + in_chunk:
                target = lines[len(offsets)]
                at = -1
                for _ in range(target - seen):  # the newline ending line target − 1
                    at = chunk.index(b"\n", at + 1)
                offsets.append(position + at + 1)
            seen += in_chunk
            position += len(chunk)
    size = path.stat().st_size
    return offsets + [size] * (len(lines) - len(offsets))


def _unit(path: Path, number: int, line: bytes, checked: bool = False) -> Unit:
    """The unit on line ``number``; ``checked`` when the line is known to hold no integer
    beyond 64 bits (one this program wrote after reading it once)."""
    if not checked:
        check_json_integers(line, path, f"line {number}")
    # orjson's parse and pydantic's validation of the object take three quarters of the time
    # of pydantic's own parse of the line. pydantic words its errors on JSON input in its own
    # way, so a line that is not a valid unit is read again its way to say what is wrong.
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        try:
            return Unit.model_validate(data)
        except ValidationError:
            pass
    try:
        return Unit.model_validate_json(line)
    except ValidationError as exc:
        error = exc.errors()[0]
        if error["type"] == "json_invalid":
            why = error["ctx"]["error"] if "ctx" in error else error["msg"]
            raise InputError(
                path, f"line {number}", f"not valid JSON ({why}); each line must be one JSON value"
            ) from None
        from agent_backtest.formats.base import first_validation_error

        raise InputError(
            path, f"line {number}", f"not a unit record ({first_validation_error(exc)})"
        ) from None
