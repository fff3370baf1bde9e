"""Reading a run's own units file back to send it: places, skipped places, and a broken line."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_backtest.errors import InputError
from agent_backtest.units.io import PARSE_BATCH, read_placed_units
from tests.units.test_units_file_stretches import write

COUNT = 2 * PARSE_BATCH + 5  # whole batches and a part of one


def test_every_unit_comes_with_its_place_and_skipped_places_are_left_out(tmp_path: Path) -> None:
    path = tmp_path / "units.jsonl"
    ids = write(path, COUNT)
    skip = {0, PARSE_BATCH - 1, PARSE_BATCH, COUNT - 1}
    read = [(place, unit.unit_id) for place, unit in read_placed_units(path, skip)]
    assert read == [(place, ids[place]) for place in range(COUNT) if place not in skip]


def test_a_broken_line_is_raised_after_every_unit_before_it(tmp_path: Path) -> None:
    path = tmp_path / "units.jsonl"
    ids = write(path, COUNT)
    broken = PARSE_BATCH + 3  # inside a batch, not at its start
    lines = path.read_bytes().splitlines(keepends=True)
    lines[broken] = b'{"schema": "abt.unit/1"}\n'
    path.write_bytes(b"".join(lines))
    units = read_placed_units(path)
    given = [next(units)[1].unit_id for _ in range(broken)]
    assert given == ids[:broken]
    with pytest.raises(InputError) as raised:
        next(units)
    assert f"line {broken + 1}" in str(raised.value)
