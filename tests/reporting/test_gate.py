"""``abt gate``: exit 0 when every bar holds, 3 when one does not (saying why), 2 for misuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.reporting.gate import at_least
from agent_backtest.runs import MeanEstimate

runner = CliRunner()


def gate(run: Path, *args: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``abt gate RUN ARGS``."""
    result = runner.invoke(app, ["gate", str(run), *args])
    return result.exit_code, result.stdout, result.stderr


def test_gate_passes_and_fails_on_the_point_estimate(candidate_run: Path) -> None:
    agreement = json.loads((candidate_run / "summary.json").read_text())["overall"]["agreement"]
    code, out, _ = gate(candidate_run, "--min-agreement", f"{agreement['mean'] - 0.01:.4f}")
    assert code == 0 and "gate passed" in out
    code, out, err = gate(candidate_run, "--min-agreement", f"{agreement['mean'] + 0.01:.4f}")
    assert code == 3
    assert f"agreement point estimate {agreement['mean']:.4f} <" in err
    assert "NOT met" in out and "gate failed" in out


def test_lower_bound_makes_the_bar_apply_to_the_interval(candidate_run: Path) -> None:
    strict = json.loads((candidate_run / "summary.json").read_text())["overall"]["strict"]
    bar = f"{(strict['mean'] + strict['ci95'][0]) / 2:.4f}"  # between the bound and the mean
    assert gate(candidate_run, "--min-strict", bar)[0] == 0
    code, _, err = gate(candidate_run, "--min-strict", bar, "--use-lower-bound")
    assert code == 3 and "lower bound of the 95% interval" in err


def test_infrastructure_error_bars_use_the_counts(candidate_run: Path) -> None:
    assert gate(candidate_run, "--max-infra-errors", "1")[0] == 0
    code, _, err = gate(candidate_run, "--max-infra-errors", "0")
    assert code == 3 and "infrastructure errors 1 > 0" in err
    assert gate(candidate_run, "--max-infra-error-rate", "0.025")[0] == 0
    assert gate(candidate_run, "--max-infra-error-rate", "0.02")[0] == 3


def test_gate_markdown_lists_each_bar(candidate_run: Path) -> None:
    code, out, _ = gate(
        candidate_run, "--min-agreement", "0.99", "--max-infra-errors", "5", "--format", "markdown"
    )
    assert code == 3
    assert out.startswith("### abt gate\n\n**gate failed**: candidate\n")
    assert "| agreement | ≥ 0.99 |" in out and "| **no** |" in out
    assert "| infrastructure errors | ≤ 5 | 1.0000 | yes |" in out


def test_gate_without_a_bar_is_a_user_error(candidate_run: Path) -> None:
    code, _, err = gate(candidate_run)
    assert code == 2 and "no bar given" in err


@pytest.mark.parametrize("use_lower_bound", [False, True])
def test_nothing_scored_never_meets_a_bar(use_lower_bound: bool) -> None:
    empty = MeanEstimate(mean=None, se=None, ci95=None, n=0, sessions=0)
    check = at_least("agreement", empty, 0.5, use_lower_bound)
    assert not check.met and "nothing scored" in check.why


def test_one_session_has_no_interval_to_meet_a_lower_bound_bar() -> None:
    single = MeanEstimate(mean=1.0, se=None, ci95=None, n=5, sessions=1)
    assert at_least("agreement", single, 0.9, False).met
    check = at_least("agreement", single, 0.9, True)
    assert not check.met and "no interval" in check.why
