"""A rerun over unchanged inputs does no work it already did: the input's hash is taken from
the run it overwrites while the file's size and modification time are the same (``--verify-inputs``
hashes it again), and units read from a units file are written to units.jsonl as their lines
were, unless something changed them."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import agent_backtest as abt
from agent_backtest.api import SelectionOptions
from agent_backtest.trace import dump_record
from agent_backtest.units import Unit
from tests.replaying.test_replay_cli import abt as abt_cli


def replay(units: Path, out: Path, **options: object) -> dict:
    """A replay on production's own answers, unscored; its run.json."""
    abt.replay(units, model="mock/golden", out=out, overwrite=True, score=False, **options)
    return json.loads((out / "run.json").read_text())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def spaced(units_file: Path, tmp_path: Path) -> Path:
    """The units file written with spaces after separators, as another program might."""
    path = tmp_path / "spaced.jsonl"
    lines = [json.dumps(json.loads(line)) for line in units_file.read_text().splitlines()]
    path.write_text("\n".join(lines))  # and no newline after the last line
    return path


def test_a_rerun_takes_the_recorded_hash_of_an_unchanged_input(
    units_file: Path, tmp_path: Path
) -> None:
    units = tmp_path / "units.jsonl"
    units.write_bytes(units_file.read_bytes())
    out = tmp_path / "run"
    first = replay(units, out)["inputs"][0]
    assert first["sha256"] == sha256(units)
    assert first["mtime_ns"] == units.stat().st_mtime_ns
    # The same size and modification time, other bytes: only a new hash could tell.
    status = units.stat()
    data = units.read_bytes()
    units.write_bytes(data.replace(b"airline", b"AIRLINE", 1))
    os.utime(units, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert replay(units, out)["inputs"][0] == first
    verified = replay(units, out, verify_inputs=True)["inputs"][0]
    assert verified["sha256"] == sha256(units) != first["sha256"]


def test_an_input_touched_since_the_run_is_hashed_again(units_file: Path, tmp_path: Path) -> None:
    units = tmp_path / "units.jsonl"
    units.write_bytes(units_file.read_bytes())
    out = tmp_path / "run"
    first = replay(units, out)["inputs"][0]
    units.write_bytes(units.read_bytes().replace(b"airline", b"AIRLINE", 1))
    os.utime(units, ns=(0, first["mtime_ns"] + 1_000_000_000))
    again = replay(units, out)["inputs"][0]
    assert again["sha256"] == sha256(units) != first["sha256"]


def test_a_broken_run_json_only_means_the_input_is_hashed(units_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    replay(units_file, out)
    (out / "run.json").write_text('{"inputs": 3')
    assert replay(units_file, out)["inputs"][0]["sha256"] == sha256(units_file)


def test_verify_inputs_is_refused_on_a_resume(units_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    replay(units_file, out)
    code, output = abt_cli("replay", "--resume", out, "--verify-inputs")
    assert code == 2, output
    assert "--verify-inputs: does nothing to a run you resume" in output


def test_unchanged_units_keep_their_lines(units_file: Path, tmp_path: Path) -> None:
    units = spaced(units_file, tmp_path)
    out = tmp_path / "run"
    replay(units, out)
    assert (out / "units.jsonl").read_bytes() == units.read_bytes() + b"\n"


def test_units_labelled_with_a_split_are_written_with_their_label(
    units_file: Path, tmp_path: Path
) -> None:
    units = spaced(units_file, tmp_path)
    out = tmp_path / "run"
    replay(units, out, selection=SelectionOptions(val_fraction=0.5, split="all"))
    lines = (out / "units.jsonl").read_bytes().splitlines()
    written = [Unit.model_validate_json(line) for line in lines]
    assert {unit.split for unit in written} == {"test", "val"}
    assert lines == [dump_record(unit) for unit in written]


def test_a_unit_that_lost_a_secret_field_is_written_without_it(
    units_file: Path, tmp_path: Path
) -> None:
    lines = units_file.read_text().splitlines()
    first = json.loads(lines[0])
    first["request"]["params"]["api_key"] = "sk-not-for-the-run-directory"
    units = tmp_path / "units.jsonl"
    units.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    out = tmp_path / "run"
    replay(units, out)
    written = (out / "units.jsonl").read_text().splitlines()
    assert "sk-not-for-the-run-directory" not in written[0]
    assert "api_key" not in json.loads(written[0])["request"]["params"]
    assert written[1:] == lines[1:]
