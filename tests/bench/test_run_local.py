"""``abt bench run`` with the embedded model as the agent: one short episode, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench.conftest import abt, lines, write_benchmark


@pytest.mark.local_model
def test_the_embedded_model_plays_an_episode_that_is_saved_and_graded(tmp_path: Path) -> None:
    benchmark = write_benchmark(tmp_path / "shop", cases=1, max_steps=3)
    out = tmp_path / "run"
    code, output = abt(
        "bench", "run", benchmark, "--agent", "local/smollm2", "--user", "scripted",
        "--out", out, "--no-cache",
    )  # fmt: skip
    assert code == 0, output
    (episode,) = lines(out / "episodes.jsonl")
    assert episode["error"] is None and 1 <= episode["model_calls"] <= 3
    assert episode["ended_by"] in ("stop_marker", "terminal_tool", "step_limit")
    (grade,) = lines(out / "grades.jsonl")
    assert grade["reward"] is not None and 0.0 <= grade["reward"] <= 1.0
    manifest = json.loads((out / "run.json").read_text())
    assert (
        manifest["status"] == "completed" and manifest["counts"]["agent"]["model_load_seconds"] > 0
    )
    assert manifest["roles"]["agent"]["model"] == "local/smollm2"
