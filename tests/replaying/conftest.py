"""Fixtures of the replay tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.conftest import TAU_TOOLS, TAU_TRAJECTORIES

runner = CliRunner()


@pytest.fixture
def units_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 24 units of the τ-bench sample, with tools and the recorded model."""
    path = tmp_path_factory.mktemp("units") / "units.jsonl"
    result = runner.invoke(
        app,
        [
            "units",
            str(TAU_TRAJECTORIES),
            "--tools",
            str(TAU_TOOLS),
            "--recorded-model",
            "gpt-4o",
            "-o",
            str(path),
            "--limit",
            "24",
        ],
    )
    assert result.exit_code == 0, result.output
    return path
