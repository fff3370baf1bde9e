"""Answers found in the response cache while a replay is planned: recorded and scored as if they
had been asked for one by one, only the rest sent, nothing left behind by a plan that fails."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI
from tests.replaying.test_cost import flat
from tests.replaying.test_replay_cli import abt, recorded_model_config, records, replay_args


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cached-answers")
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def private_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The folder temporary files go to, this test's alone."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def pairs(run: Path) -> dict[tuple[str, int], dict]:
    return {(r["unit_id"], r["repeat"]): r for r in records(run)}


def test_a_partly_cached_rerun_sends_only_the_rest_and_scores_every_answer(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    first, second = tmp_path / "runs" / "first", tmp_path / "runs" / "second"
    code, output = abt(*replay_args(units_file, fake_openai, first, "--limit", "10"))
    assert code == 0, output
    code, output = abt(*replay_args(units_file, fake_openai, second, "--k", "2"))
    assert code == 0, output
    assert fake_openai.total == 10 + 38  # the 10 cached pairs were not sent again
    assert "48 of 48 sent pairs recorded" in output and "cache hits 10" in output
    again, before = pairs(second), pairs(first)
    assert len(again) == 48
    assert {key for key, record in again.items() if record["cache_hit"]} == set(before)
    for key, record in before.items():
        assert again[key]["response"] == record["response"]
        assert again[key]["request_sha"] == record["request_sha"]
    manifest = json.loads((second / "run.json").read_text())
    assert manifest["status"] == "completed"
    assert manifest["counts"]["candidate"]["cache_hits"] == 10
    assert manifest["counts"]["candidate"]["calls"] == 38
    live = (second / "scores.jsonl").read_bytes()
    assert len(live.splitlines()) == 48
    code, output = abt("score", second)  # the same scores, made after the replay
    assert code == 0, output
    assert (second / "scores.jsonl").read_bytes() == live


def test_a_plan_that_fails_leaves_no_record_behind(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path, private_tmp: Path
) -> None:
    abt(*replay_args(units_file, fake_openai, tmp_path / "runs" / "first"))
    refused = tmp_path / "runs" / "refused"
    # Half answered from the cache (its first repeats), the other half over budget.
    price = '[prices."openai/candidate-1"]\ninput = 1000.0\noutput = 1000.0\n'
    (tmp_path / "abt.toml").write_text(price)
    args = replay_args(units_file, fake_openai, refused, "--k", "2", "--max-cost", "0.01")
    code, output = abt(*args)
    assert code == 2 and "over the budget" in output, output
    assert not refused.exists()
    assert list(private_tmp.iterdir()) == []
    assert fake_openai.total == 24


def test_a_rerun_answered_from_the_cache_is_estimated_at_no_calls(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    abt(*replay_args(units_file, fake_openai, tmp_path / "runs" / "first"))
    price = '[prices."openai/candidate-1"]\ninput = 1000.0\noutput = 1000.0\n'
    (tmp_path / "abt.toml").write_text(price)
    again = tmp_path / "runs" / "again"
    code, output = abt(*replay_args(units_file, fake_openai, again, "--max-cost", "0.01"))
    assert code == 0, output
    assert "estimated cost, candidate: no calls · 24 answered from the cache" in flat(output)
    assert fake_openai.total == 24
    assert all(record["cache_hit"] for record in records(again))


def test_a_rerun_of_the_recorded_models_is_answered_from_the_cache(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    config = recorded_model_config(tmp_path, fake_openai)
    cache = tmp_path / "cache"
    for run in ("first", "again"):
        code, output = abt(
            "replay", units_file, "--model", "trace", "--config", config, "--limit", "6",
            "--out", tmp_path / "runs" / run, "--cache-dir", cache,
        )  # fmt: skip
        assert code == 0, output
    assert fake_openai.total == 6
    again = records(tmp_path / "runs" / "again")
    assert len(again) == 6
    assert all(r["cache_hit"] and r["model"] == "prod/gpt-4o" for r in again)
