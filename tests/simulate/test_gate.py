"""``abt gate --min-pass-rate`` on a simulate run: exit 0 when the pass rate holds, 3 when it
does not (the point estimate, or with --use-lower-bound the interval's lower end), 2 for a run
with no decided verdict and for a bar the run's kind does not have."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.reporting.runs import build_run, golden, tau_units
from tests.simulate.judged_runs import Planned, judged_run

runner = CliRunner()


@pytest.fixture
def four_of_five(tmp_path: Path) -> Path:
    """Four passes and a failure over five seeds, one flow uncertain and one not played."""
    outcomes = ["pass", "pass", "fail", "pass", "pass", "transport", "not_played"]
    return judged_run(
        tmp_path, "run", [Planned(f"f{n}", "notes", f"s{n}", o) for n, o in enumerate(outcomes)]
    )


def gate(run: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["gate", str(run), *args])
    return result.exit_code, result.output


def test_the_pass_rate_bar_holds_or_fails_on_the_point_estimate(four_of_five: Path) -> None:
    code, out = gate(four_of_five, "--min-pass-rate", "0.75")
    assert code == 0, out
    assert "met: pass rate point estimate 0.8000 >= 0.75" in out
    assert "4 passed of 5 decided (5 seeds, 7 flows)" in out
    assert "1 uncertain, 1 not played (not in the rate)" in out
    assert "gate passed" in out
    code, out = gate(four_of_five, "--min-pass-rate", "0.85")
    assert code == 3
    assert "NOT met: pass rate point estimate 0.8000 < 0.85" in out and "gate failed" in out


def test_the_lower_bound_applies_the_bar_to_the_interval(four_of_five: Path) -> None:
    code, out = gate(four_of_five, "--min-pass-rate", "0.75", "--use-lower-bound")
    assert code == 3
    assert "pass rate lower bound of the 95% interval 0." in out


def test_markdown_names_the_bar_and_the_rate(four_of_five: Path) -> None:
    code, out = gate(four_of_five, "--min-pass-rate", "0.5", "--format", "markdown")
    assert code == 0
    assert "**gate passed**: run" in out and "| pass rate | ≥ 0.5 | 0.8000 | yes |" in out


def test_a_run_with_no_decided_verdict_is_refused(tmp_path: Path) -> None:
    run = judged_run(
        tmp_path,
        "run",
        [Planned("f1", "notes", None, "transport"), Planned("f2", "notes", None, "unjudged")],
    )
    code, out = gate(run, "--min-pass-rate", "0.5")
    assert code == 2
    assert "no decided verdict (1 uncertain, 1 not judged, 0 not played of 2 flows)" in out


def test_bars_of_the_other_kind_of_run_are_refused(four_of_five: Path, tmp_path: Path) -> None:
    code, out = gate(four_of_five, "--min-agreement", "0.5")
    assert code == 2
    assert "--min-agreement: is a bar of a scored replay run" in out and "--min-pass-rate" in out
    code, out = gate(four_of_five)
    assert code == 2 and "--min-pass-rate: no bar given for a simulate run" in out
    replay = build_run(tmp_path / "replay", tau_units(tmp_path / "units", 3), golden)
    code, out = gate(replay, "--min-pass-rate", "0.5")
    assert code == 2 and "--min-pass-rate: is a bar of a simulate run" in out
