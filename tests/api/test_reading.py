"""Reading traces through the library: ingest, write_units, show and check_patch return what the
commands print, on the recorded τ-bench sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agent_backtest as abt
from agent_backtest.trace import dump_record
from tests.conftest import TAU_TOOLS, TAU_TRAJECTORIES
from tests.patch.tau_units import tau_units

READING = abt.ReadingOptions(tools=TAU_TOOLS, recorded_model="gpt-4o")


def test_ingest_gives_every_session_to_the_sink_and_counts_the_units() -> None:
    lines: list[bytes] = []
    [read] = abt.ingest(TAU_TRAJECTORIES, reading=READING, sink=lines.append)
    assert read.summary.sessions == len(lines) == 100
    assert json.loads(lines[0])["id"]
    assert sum(read.units.values()) == 1381


def test_write_units_writes_what_it_counts(tmp_path: Path) -> None:
    lines: list[bytes] = []
    selection = abt.SelectionOptions(per_session=1, limit=5)
    outcome = abt.write_units(TAU_TRAJECTORIES, lines.append, reading=READING, selection=selection)
    assert len(lines) == 5 == outcome.written["action"] + outcome.written["router"]
    assert outcome.dropped["over_limit"] > 0
    assert outcome.units_file is None and len(outcome.inputs) == 1

    units_file = tmp_path / "units.jsonl"
    units_file.write_bytes(b"".join(lines))
    again = abt.write_units(units_file, lambda line: None)
    assert again.units_file is not None and sum(again.units_file.values()) == 5
    assert not again.reclassified


def test_show_finds_one_session_in_full_or_lists_them() -> None:
    listed = abt.show(TAU_TRAJECTORIES, reading=READING)
    assert len(listed.sessions) == 100 and not listed.single
    one = abt.show(TAU_TRAJECTORIES, session=listed.sessions[3].id, reading=READING)
    assert one.single and one.sessions == [listed.sessions[3]]


def test_show_names_the_sessions_held_when_the_id_is_unknown() -> None:
    with pytest.raises(abt.InputError, match="no session 'nope'; the file holds 100"):
        abt.show(TAU_TRAJECTORIES, session="nope", reading=READING)


def test_show_reads_a_units_file_by_unit(tmp_path: Path) -> None:
    units = tau_units(3)
    path = tmp_path / "units.jsonl"
    path.write_bytes(b"".join(dump_record(unit) + b"\n" for unit in units))
    shown = abt.show(path, unit=units[1].unit_id)
    assert shown.single and [u.unit_id for u in shown.units] == [units[1].unit_id]
    with pytest.raises(abt.InputError, match="this is a units file"):
        abt.show(path, explain_records=True)


def test_check_patch_reports_the_units_each_op_changed(tmp_path: Path) -> None:
    units = tmp_path / "units.jsonl"
    units.write_bytes(b"".join(dump_record(unit) + b"\n" for unit in tau_units(6)))
    patch = tmp_path / "policy.json"
    ops = [
        {"id": "drop-search", "target": "tool", "action": "remove", "tool": "search_direct_flight"},
        {"id": "typo", "target": "tool", "action": "remove", "tool": "search_flight"},
    ]
    patch.write_text(json.dumps({"schema": "abt.patch/1", "ops": ops}), encoding="utf-8")
    checked = abt.check_patch(patch, units)
    assert [op.units_changed for op in checked.report.ops] == [6, 0]
    assert checked.report.unmatched == ["typo"]
    assert "search_direct_flight" in checked.diffs()["drop-search"]
