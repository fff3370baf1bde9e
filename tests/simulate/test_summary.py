"""summary.json of a simulate run: the pass rate overall and per family over decided flows,
clustered by seed, with uncertain, unjudged and unplayed flows counted apart."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.statistics import clustered_mean
from tests.simulate.judged_runs import Planned, judged_run

runner = CliRunner()
PLANS = [
    Planned("n1", "notes", "s1", "pass"),
    Planned("n2", "notes", "s1", "fail"),
    Planned("n3", "notes", "s2", "pass"),
    Planned("n4", "notes", "s3", "transport"),
    Planned("n5", "notes", "s3", "invalid"),
    Planned("c1", "calendar", "s4", "pass"),
    Planned("c2", "calendar", None, "fail_execution"),
    Planned("c3", "calendar", "s6", "not_played"),
    Planned("c4", "calendar", "s7", "unjudged"),
]


def summary_of(run: Path) -> dict:
    return json.loads((run / "summary.json").read_text())


def test_judging_writes_the_pass_rate_over_decided_flows_clustered_by_seed(
    tmp_path: Path,
) -> None:
    run = judged_run(tmp_path, "run", PLANS)
    summary = summary_of(run)
    assert summary["schema"] == "abt.simulate_summary/1"
    assert stat.S_IMODE((run / "summary.json").stat().st_mode) == 0o600
    overall = summary["overall"]
    # Written as the judging ended, when c4 was not played yet.
    assert overall | {"rate": None} == {
        "rate": None, "flows": 9, "decided": 5, "passed": 3, "failed": 2, "uncertain": 2,
        "unjudged": 0, "not_played": 2, "coverage": 5 / 9, "repeats": None,
    }  # fmt: skip
    assert summary["uncertain_by_reason"] == {"judge_invalid": 1, "transport_error": 1}
    assert summary["failures_by_owner"] == {"agent_execution": 1, "model": 1}
    assert summary["failures_by_category"] == {"claimed_without_call": 1, "wrong_arguments": 1}


def test_abt_report_counts_a_conversation_played_after_judging_as_unjudged(
    tmp_path: Path,
) -> None:
    run = judged_run(tmp_path, "run", PLANS)
    result = runner.invoke(app, ["report", str(run)])
    assert result.exit_code == 0, result.output
    summary = summary_of(run)
    overall, notes, calendar = (
        summary["overall"],
        summary["families"]["notes"],
        summary["families"]["calendar"],
    )
    # decided: n1 pass, n2 fail, n3 pass, c1 pass, c2 fail; seeds s1 s1 s2 s4 c2 (its own id)
    assert (overall["decided"], overall["passed"], overall["failed"]) == (5, 3, 2)
    assert (overall["uncertain"], overall["unjudged"], overall["not_played"]) == (2, 1, 1)
    assert overall["rate"]["mean"] == 3 / 5
    assert (overall["rate"]["n"], overall["rate"]["seeds"]) == (5, 4)
    by_seed = clustered_mean([1, 0, 1, 1, 0], ["s1", "s1", "s2", "s4", "c2"])
    by_flow = clustered_mean([1, 0, 1, 1, 0], ["n1", "n2", "n3", "c1", "c2"])
    assert overall["rate"]["ci95"] == [by_seed.low, by_seed.high]
    assert (by_seed.low, by_seed.high) != (by_flow.low, by_flow.high)
    assert notes | {"rate": None} == {
        "rate": None, "flows": 5, "decided": 3, "passed": 2, "failed": 1, "uncertain": 2,
        "unjudged": 0, "not_played": 0, "coverage": 3 / 5, "repeats": None,
    }  # fmt: skip
    assert (notes["rate"]["mean"], notes["rate"]["seeds"]) == (2 / 3, 2)
    assert calendar | {"rate": None} == {
        "rate": None, "flows": 4, "decided": 2, "passed": 1, "failed": 1, "uncertain": 0,
        "unjudged": 1, "not_played": 1, "coverage": 2 / 4, "repeats": None,
    }  # fmt: skip
    assert "pass rate 0.600 [" in result.output
    assert "3 passed of 5 decided (4 seeds, 9 flows)" in result.output
    assert "2 uncertain, 1 not judged, 1 not played (not in the rate)" in result.output
    assert "1 conversations are not judged" in result.output


def test_one_seed_gives_no_interval_and_few_seeds_never_a_zero_width_one(
    tmp_path: Path,
) -> None:
    one_seed = judged_run(
        tmp_path, "one", [Planned(f"f{n}", "notes", "s1", "pass") for n in range(4)]
    )
    rate = summary_of(one_seed)["overall"]["rate"]
    assert (rate["mean"], rate["ci95"], rate["seeds"]) == (1.0, None, 1)
    assert "the rate rests on one seed: it has no interval" in summary_of(one_seed)["warnings"]
    three = judged_run(
        tmp_path, "three", [Planned(f"f{n}", "notes", f"s{n}", "pass") for n in range(3)]
    )
    low, high = summary_of(three)["overall"]["rate"]["ci95"]
    assert high == 1.0 and low < 0.5  # three passes are not proof of a perfect agent


def test_the_judge_command_prints_the_rate_and_the_failures(tmp_path: Path) -> None:
    plans = [p for p in PLANS if p.outcome != "unjudged"]
    run = judged_run(tmp_path, "run", plans)
    result = runner.invoke(app, ["report", str(run)])
    assert "failures by owner: agent_execution 1, model 1" in result.output
    assert "uncertain by reason: judge_invalid 1, transport_error 1" in result.output
    assert "  notes 0.667 [" in result.output and "  calendar " in result.output


def test_schema_lists_the_summary() -> None:
    result = runner.invoke(app, ["schema", "simulate_summary"])
    assert result.exit_code == 0
    assert "uncertain_by_reason" in json.loads(result.output)["properties"]


def test_the_markdown_summary_escapes_what_the_flows_named(tmp_path: Path) -> None:
    run = judged_run(
        tmp_path,
        "run",
        [Planned("f1", "<b>notes</b>|x", None, "pass"), Planned("f2", "calendar", None, "fail")],
    )
    result = runner.invoke(app, ["report", str(run), "--format", "markdown"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("### abt report: run\n\n- pass rate 0.500 [")
    assert "  - &lt;b&gt;notes&lt;/b&gt;\\|x 1.000 (no interval: 1 seed)" in result.stdout
    assert "<b>" not in result.stdout
