"""Warnings that say a headline covers less than it seems: a candidate blind to the tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.runs.scores import ScoreRecord
from agent_backtest.scoring.summary import coverage_warnings
from tests.conftest import TAU_TOOLS, TAU_TRAJECTORIES
from tests.fake_openai import FakeOpenAI

runner = CliRunner()


def test_a_server_that_ignores_the_tools_is_warned_of(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeOpenAI(ignores_tools=True) as server:
        config = tmp_path / "abt.toml"
        config.write_text(
            '[providers.served]\ntype = "openai"\napi_key_env = ""\n'
            f'base_url = "{server.base_url}"\n'
        )
        run = tmp_path / "run"
        result = runner.invoke(
            app,
            [
                "replay", str(TAU_TRAJECTORIES), "--tools", str(TAU_TOOLS),
                "--recorded-model", "gpt-4o", "--model", "served/agent", "--out", str(run),
                "--config", str(config), "--no-cache", "--limit", "12",
            ],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    warnings = json.loads((run / "summary.json").read_text())["warnings"]
    assert any("never called a tool" in w and "dropping the tools" in w for w in warnings)
    assert "never called a tool" in " ".join(result.output.split())


def record(index: int, ratio: float | None, tool: str | None = "find") -> ScoreRecord:
    return ScoreRecord(
        unit_id=f"u{index}",
        repeat=0,
        session_id=f"s{index % 3}",
        kind="action",
        model="openai/candidate",
        golden_tool="find",
        candidate_tool=tool,
        status="scored",
        bucket="match" if tool else "text_instead_of_tool",
        strict=bool(tool),
        score=1.0 if tool else 0.0,
        method="matcher",
        input_tokens_ratio=ratio,
        scorer="abt-scorer/2",
        scoring_id="x",
    )


def test_far_fewer_prompt_tokens_than_production_is_warned_of() -> None:
    short = coverage_warnings([record(i, 0.2) for i in range(6)])
    assert any("median 0.20 of production's prompt tokens" in w for w in short)
    assert coverage_warnings([record(i, 0.97) for i in range(6)]) == []
    # a few answers are not enough to say so, and the calls it did make are no tool-blindness
    assert coverage_warnings([record(i, 0.2) for i in range(4)]) == []
