"""One settle for every job: the status a run ends with, from what its records say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_backtest.runs.manifest_base import ManifestBase
from agent_backtest.runs.settle import final_status, settle
from agent_backtest.simulate.manifest import SimulateManifest

BEFORE = Path(__file__).parents[1] / "fixtures" / "runs_before_kind"


@pytest.mark.parametrize(
    ("records", "errors", "status"),
    [
        (0, 0, "completed"),  # nothing left to do
        (5, 0, "completed"),
        (5, 2, "completed_with_errors"),
        (5, 5, "failed"),  # not one record without an error
        (1, 1, "failed"),
    ],
)
def test_a_run_that_went_through_its_work_is_judged_by_its_errors(
    records: int, errors: int, status: str
) -> None:
    assert final_status(records, errors) == status


def test_settle_saves_the_status_and_when_the_run_ended(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text((BEFORE / "simulate.json").read_text())
    manifest = SimulateManifest.load(path)
    settle(manifest, path, "running", 2, 0)
    saved = ManifestBase.load(path)
    assert saved.status == "running" and saved.finished_at is None
    settle(manifest, path, None, 2, 1)
    saved = ManifestBase.load(path)
    assert saved.status == "completed_with_errors" and saved.finished_at is not None
    settle(manifest, path, "interrupted", 2, 0)  # a stop says how the run ended, errors or not
    assert json.loads(path.read_text())["status"] == "interrupted"
