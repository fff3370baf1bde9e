"""summary.json: written by scoring as a typed record, byte for byte the same each time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.errors import InputError
from agent_backtest.runs import RunDirectory
from agent_backtest.scoring.run import ScoreSettings, score_run
from agent_backtest.units import Unit
from tests.reporting.runs import build_run, golden, tau_units


@pytest.fixture(scope="module")
def units(tmp_path_factory: pytest.TempPathFactory) -> list[Unit]:
    """The first 6 τ-bench units."""
    return tau_units(tmp_path_factory.mktemp("summary-units"), 6)


def keys_sorted(value: Any) -> bool:
    """True when every object in ``value`` lists its keys in sorted order."""
    if isinstance(value, dict):
        return list(value) == sorted(value) and all(keys_sorted(v) for v in value.values())
    if isinstance(value, list):
        return all(keys_sorted(v) for v in value)
    return True


def test_scoring_again_writes_the_same_bytes_with_sorted_keys(
    units: list[Unit], tmp_path: Path
) -> None:
    run = build_run(tmp_path / "run", units, golden, labels={"team": "search"})
    directory = RunDirectory(run)
    first = directory.summary_path.read_bytes()
    score_run(directory, ScoreSettings())
    assert directory.summary_path.read_bytes() == first
    data = json.loads(first)
    assert keys_sorted(data) and data["schema"] == "abt.summary/3"
    summary = directory.read_summary()
    assert summary.labels == {"team": "search"}
    assert summary.run.model == "mock/candidate" and summary.run.status == "completed"
    assert summary.counts.records == 6 and summary.overall.strict.mean == 1.0
    assert list(summary.by_agent_version) == ["(not recorded)"]


def test_a_summary_that_is_not_json_is_refused_naming_the_file(
    units: list[Unit], tmp_path: Path
) -> None:
    run = build_run(tmp_path / "run", units[:2], golden)
    directory = RunDirectory(run)
    directory.summary_path.write_text("{")
    with pytest.raises(InputError) as caught:
        directory.read_summary()
    assert caught.value.file == str(directory.summary_path)
    assert f"score the run again: abt score {run}" in str(caught.value)
