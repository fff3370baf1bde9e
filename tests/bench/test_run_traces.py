"""Each episode's trace is a canonical session: abt show, units and profile read it as it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench.conftest import abt, lines, scripted
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.fake_openai(reply=scripted)  # the shop's agent, user and judge


def test_show_units_and_profile_read_an_episodes_trace(
    benchmark: Path, config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    code, output = abt(
        "bench", "run", benchmark, "--agent", "fake/agent-1", "--user", "scripted",
        "--out", out, "--config", config, "--no-cache",
    )  # fmt: skip
    assert code == 0, output
    episode = lines(out / "episodes.jsonl")[0]
    trace = out / episode["trace"]
    code, shown = abt("show", trace)
    assert code == 0, shown
    assert (
        f"session {episode['episode_id']}" in shown and "lookup" in shown and "###STOP###" in shown
    )
    units_file = tmp_path / "units.jsonl"
    code, output = abt("units", trace, "-o", units_file)
    assert code == 0, output
    units = lines(units_file)
    assert [u["step_id"] for u in units] == ["llm-1", "llm-2", "llm-3"]
    assert units[1]["golden"]["message"]["tool_calls"][0]["name"] == "order"
    profile_file = tmp_path / "profile.json"
    code, output = abt("profile", *sorted((out / "traces").iterdir()), "-o", profile_file)
    assert code == 0, output
    calls = json.loads(profile_file.read_text())["groups"]["shop"]["calls"]
    assert calls["llm"]["total"] == 9 and calls["per_session"]["tool"]["observed_total"] == 6
    session = json.loads(trace.read_text())
    assert session["metadata"]["case_id"] == episode["case_id"]
    assert session["metadata"]["prompt_group"] == episode["prompt_group"]
