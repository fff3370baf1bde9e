"""Reading a stretch of a units file: every line once, numbered as in the whole file."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_backtest.errors import InputError
from agent_backtest.trace import LLMRequest, LLMResponse, Message
from agent_backtest.units import Unit, make_unit_id
from agent_backtest.units.io import read_units_file, stretches


def unit(index: int) -> Unit:
    """A unit whose request grows with its index, so lines differ in length."""
    return Unit(
        unit_id=make_unit_id("s", str(index)),
        session_id="s",
        turn_index=0,
        step_id=str(index),
        kind="action",
        request=LLMRequest(messages=[Message(role="user", content="q" * (index * 37 % 400))]),
        golden=LLMResponse(message=Message(role="assistant", content="a")),
    )


def write(path: Path, count: int, last_newline: bool = True) -> list[str]:
    lines = [unit(i).model_dump_json(by_alias=True) for i in range(count)]
    path.write_text("\n".join(lines) + ("\n" if last_newline else ""))
    return [unit(i).unit_id for i in range(count)]


@pytest.mark.parametrize(("count", "parts"), [(50, 7), (50, 1), (3, 8), (1, 2)])
def test_stretches_read_every_unit_once_in_order(tmp_path: Path, count: int, parts: int) -> None:
    path = tmp_path / "units.jsonl"
    ids = write(path, count)
    cuts = stretches(path, parts)
    assert len(cuts) == parts
    assert cuts[0].start == 0 and cuts[-1].end == path.stat().st_size
    read = [[u.unit_id for u in read_units_file(path, cut)] for cut in cuts]
    assert [i for part in read for i in part] == ids
    if count >= parts:  # as many lines in each, give or take one
        assert max(map(len, read)) - min(map(len, read)) <= 1


def test_a_last_line_without_newline_is_read(tmp_path: Path) -> None:
    path = tmp_path / "units.jsonl"
    ids = write(path, 9, last_newline=False)
    cuts = stretches(path, 2)
    assert [u.unit_id for cut in cuts for u in read_units_file(path, cut)] == ids


def test_a_bad_line_in_a_later_stretch_is_named_by_its_line_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "units.jsonl"
    write(path, 20)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[16] = b'{"schema": "abt.unit/1"}\n'
    path.write_bytes(b"".join(lines))
    later = stretches(path, 2)[1]
    assert later.first_line == 11
    with pytest.raises(InputError) as caught:
        list(read_units_file(path, later))
    assert caught.value.location == "line 17"
