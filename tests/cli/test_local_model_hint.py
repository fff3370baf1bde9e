"""After a replay on the embedded model, abt says that disagreement is expected and prints the
runs worth making next; the pipeline check it prints agrees with production completely."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.conftest import write_tau_units

CASSETTE = Path(__file__).parents[2] / "examples" / "traces" / "cassette-openai-tool-calls.yaml"
HINT = "is a 135M-parameter model: disagreeing with production is expected of it"


def printed_command(output: str, marker: str) -> list[str]:
    """The arguments after ``abt`` of the printed line holding ``marker``."""
    line = next(line for line in output.splitlines() if marker in line)
    return shlex.split(line.split(": abt ", 1)[1])


@pytest.mark.local_model
def test_the_embedded_model_run_names_the_pipeline_check_and_a_hosted_model(
    tmp_path: Path,
) -> None:
    # One embedded-model call on a short recorded request (a τ-bench prompt is 4,000 tokens,
    # 45 s of prompt evaluation on one core; this one takes a second or two).
    runner = CliRunner()
    units = tmp_path / "units.jsonl"
    made = runner.invoke(app, ["units", str(CASSETTE), "--limit", "1", "-o", str(units)])
    assert made.exit_code == 0, made.output
    out = tmp_path / "demo"
    local = runner.invoke(
        app, ["replay", str(units), "--model", "local/smollm2", "--out", str(out)]
    )
    assert local.exit_code == 0, local.output
    assert f"local/smollm2 {HINT}" in local.output
    hosted = printed_command(local.output, "on a hosted model, with OPENAI_API_KEY set")
    assert hosted == [
        "replay",
        str(out / "units.jsonl"),
        "--model",
        "openai/gpt-4.1-mini",
        "--out",
        f"{out}-gpt-4.1-mini",
    ]

    golden = runner.invoke(app, printed_command(local.output, "against production's own"))
    assert golden.exit_code == 0, golden.output
    assert HINT not in golden.output
    summary = json.loads(Path(f"{out}-golden", "summary.json").read_text(encoding="utf-8"))
    assert summary["overall"]["agreement"]["mean"] == 1.0


def test_a_run_on_another_model_prints_no_hint(tmp_path: Path) -> None:
    units = write_tau_units(tmp_path / "units.jsonl", limit=2)
    result = CliRunner().invoke(
        app, ["replay", str(units), "--model", "mock/golden", "--out", str(tmp_path / "run")]
    )
    assert result.exit_code == 0, result.output
    assert HINT not in result.output
