"""``abt compare`` of two simulate runs over the same flows: flips in each direction by flow,
the paired difference in pass rate clustered by seed, flows in one run only counted apart, and
a pair of runs of two kinds refused."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.statistics import paired_difference
from tests.reporting.runs import build_run, golden, tau_units
from tests.simulate.judged_runs import Planned, judged_run

runner = CliRunner()
SEEDS = {"f1": "s1", "f2": "s1", "f3": "s3", "f4": "s4", "f5": "s5", "f6": "s6"}
BASELINE = {"f1": "pass", "f2": "pass", "f3": "fail", "f4": "invalid", "f5": "pass", "f6": "fail"}
CANDIDATE = {"f1": "pass", "f2": "fail", "f3": "pass", "f4": "pass", "f5": "transport"}
CANDIDATE |= {"f6": "fail_execution"}


def run_of(tmp_path: Path, name: str, outcomes: dict[str, str], extra: str) -> Path:
    """A judged run of flows f1–f6 with these outcomes, and one flow of its own."""
    plans = [
        Planned(f, "notes" if f < "f4" else "calendar", SEEDS[f], o) for f, o in outcomes.items()
    ]
    return judged_run(tmp_path, name, [*plans, Planned(extra, "notes", extra, "pass")])


def test_flips_in_each_direction_and_the_paired_difference_by_seed(tmp_path: Path) -> None:
    a = run_of(tmp_path, "baseline", BASELINE, "only-a")
    b = run_of(tmp_path, "candidate", CANDIDATE, "only-b")
    result = runner.invoke(app, ["compare", str(a), str(b)])
    assert result.exit_code == 0, result.output
    document = json.loads((b / "compare.json").read_text())
    assert document["schema"] == "abt.simulate_comparison/1"
    assert [(f["flow_id"], f["family"], f["a"], f["b"]) for f in document["flipped"]] == [
        ("f2", "notes", "pass", "fail"),
        ("f3", "notes", "fail", "pass"),
        ("f4", "calendar", "uncertain", "pass"),
        ("f5", "calendar", "pass", "uncertain"),
    ]
    assert document["flips"] == {
        "fail → pass": 1, "pass → fail": 1, "pass → uncertain": 1, "uncertain → pass": 1,
    }  # fmt: skip
    assert document["flipped"][0]["b_owner"] == "model"
    assert document["counts"] == {
        "in_both": 6, "decided_in_both": 4, "only_in_a": 1, "only_in_b": 1, "not_judged": 0,
        "changed_flows": 0,
    }  # fmt: skip
    # decided in both: f1 pass/pass, f2 pass/fail, f3 fail/pass, f6 fail/fail
    expected = paired_difference([(1, 1, "s1"), (1, 0, "s1"), (0, 1, "s3"), (0, 0, "s6")])
    difference = document["difference"]
    assert difference["mean"] == 0.0 == expected.estimate.mean
    assert difference["ci95"] == [expected.estimate.low, expected.estimate.high]
    assert (difference["n"], difference["seeds"]) == (4, 3)
    assert document["p_value"] == expected.p_value
    assert (document["pass_rate_a"]["mean"], document["pass_rate_b"]["mean"]) == (0.5, 0.5)
    assert "pass → fail f2 (notes) [model claimed_without_call]" in result.output
    assert "not compared: 1 only in A, 1 only in B, 0 not judged on both sides" in result.output
    assert "flows only in A and" in result.output


def test_max_drop_fails_a_candidate_whose_pass_rate_fell(tmp_path: Path) -> None:
    a = judged_run(tmp_path, "a", [Planned(f"f{n}", "notes", f"s{n}", "pass") for n in range(6)])
    worse = ["fail"] * 4 + ["pass"] * 2
    b = judged_run(
        tmp_path, "b", [Planned(f"f{n}", "notes", f"s{n}", o) for n, o in enumerate(worse)]
    )
    result = runner.invoke(app, ["compare", str(a), str(b), "--max-drop", "0.1"])
    assert result.exit_code == 3, result.output
    assert "pass rate change B − A point estimate -0.6667 < -0.1" in result.output
    assert runner.invoke(app, ["compare", str(a), str(b), "--max-drop", "0.7"]).exit_code == 0
    bounded = runner.invoke(
        app, ["compare", str(a), str(b), "--max-drop", "0.7", "--use-lower-bound"]
    )
    assert bounded.exit_code == 3  # the drop the data allow is larger than 0.7


def test_a_simulate_run_and_a_replay_run_are_refused_in_one_line(tmp_path: Path) -> None:
    simulate = judged_run(tmp_path, "sim", [Planned("f1", "notes", None, "pass")])
    replay = build_run(tmp_path / "replay", tau_units(tmp_path / "units", 3), golden)
    for pair in ([simulate, replay], [replay, simulate]):
        result = runner.invoke(app, ["compare", *map(str, pair)])
        assert result.exit_code == 2
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and f"{replay}: is not a simulate run and {simulate} is" in lines[0]


def test_runs_with_no_flow_in_common_are_refused(tmp_path: Path) -> None:
    a = judged_run(tmp_path, "a", [Planned("f1", "notes", None, "pass")])
    b = judged_run(tmp_path, "b", [Planned("g1", "notes", None, "pass")])
    result = runner.invoke(app, ["compare", str(a), str(b)])
    assert result.exit_code == 2
    assert f"has no flow in common with {a}" in result.output
    assert not (b / "compare.json").exists()
