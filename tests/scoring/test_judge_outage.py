"""A judge that is down is an outage, not a verdict: its answers are judge errors of their kind,
counted apart from the candidate's, and the default gate fails the run.

A real candidate server answers every step in text (so production's text answers need a judge,
and its tool calls are decided without one); a real judge server answers HTTP 500 to every
call, or answers without a valid verdict. ``abt replay --judge`` runs and scores, then ``abt gate``
reads the run.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.runs.scores import read_scores
from tests.conftest import TAU_TOOLS, TAU_TRAJECTORIES
from tests.fake_openai import FakeOpenAI

runner = CliRunner()
STEPS = 16  # the first τ-bench steps: production answers half with a tool call, half in text


def write_config(path: Path, judge: FakeOpenAI, candidate: FakeOpenAI | None = None) -> Path:
    """abt.toml reaching ``judge`` as grading/judge (asked twice a call: one retry, no cache)
    and ``candidate`` as served/agent."""
    served = ""
    if candidate is not None:
        served = (
            f'[providers.served]\ntype = "openai"\napi_key_env = ""\n'
            f'base_url = "{candidate.base_url}"\n\n'
        )
    path.write_text(
        f'{served}[providers.grading]\ntype = "openai"\napi_key_env = ""\n'
        f'base_url = "{judge.base_url}"\n\n'
        "[roles.judge]\nmax_retries = 1\nbackoff_initial = 0\ncache = false\n"
    )
    return path


def replay_judged(tmp_path: Path, judge: FakeOpenAI) -> tuple[Path, str]:
    """A run of the first τ-bench steps on a candidate that answers in text, scored by
    ``judge``; its directory and what ``abt replay`` printed."""
    with FakeOpenAI(ignores_tools=True) as candidate:
        config = write_config(tmp_path / "abt.toml", judge, candidate)
        run = tmp_path / "run"
        result = runner.invoke(
            app,
            [
                "replay", str(TAU_TRAJECTORIES), "--tools", str(TAU_TOOLS),
                "--recorded-model", "gpt-4o", "--model", "served/agent", "--out", str(run),
                "--config", str(config), "--no-cache", "--limit", str(STEPS),
                "--judge", "grading/judge",
            ],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    return run, " ".join(result.output.split())


def score_again(run: Path, judge: FakeOpenAI) -> tuple[dict, str]:
    """``abt score RUN`` with ``judge``: the summary and what it printed."""
    config = write_config(run.parent / "judge.toml", judge)
    result = runner.invoke(
        app, ["score", str(run), "--judge", "grading/judge", "--config", str(config)]
    )
    assert result.exit_code == 0, result.output
    return json.loads((run / "summary.json").read_text()), " ".join(result.output.split())


def verdict(body: dict) -> str:
    """A judge's verdict that depends on the question only, spread over the scale."""
    digest = hashlib.sha256(json.dumps(body["messages"]).encode()).digest()
    return json.dumps({"score": (1, 0.66, 0.33, 0)[digest[0] % 4], "reason": "compared"})


def gate(run: Path, *bars: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``abt gate RUN BARS``."""
    result = runner.invoke(app, ["gate", str(run), *bars])
    return result.exit_code, result.stdout, result.stderr


def test_a_judge_that_answers_500_fails_the_default_gate(tmp_path: Path) -> None:
    with FakeOpenAI(fault="500") as judge:
        run, output = replay_judged(tmp_path, judge)
        asked = judge.total
    records = list(read_scores(run / "scores.jsonl"))
    outages = [r for r in records if r.status == "judge_error"]
    decided = [r for r in records if r.status == "scored"]
    assert len(records) == STEPS and len(outages) + len(decided) == STEPS
    assert outages and decided  # production's text answers needed the judge; its calls did not
    assert {r.error_kind for r in outages} == {"judge_http_5xx"}
    assert all(r.bucket is None and r.score is None for r in outages)
    assert all("HTTP 500" in (r.unscored_reason or "") for r in outages)
    assert asked == 2 * len(outages)  # each judge call was retried once, then given up

    summary = json.loads((run / "summary.json").read_text())
    counts = summary["counts"]
    assert counts["judge_errors"] == len(outages)
    assert counts["judge_errors_by_kind"] == {"judge_http_5xx": len(outages)}
    assert (counts["infra_errors"], counts["infra_errors_by_kind"]) == (0, {})
    assert (counts["unscored"], counts["decided"]) == (0, len(decided))
    assert f"infrastructure errors (not scored): judge_http_5xx {len(outages)}" in output
    assert f"judge errors: {len(outages)})" in output
    assert any("the judge could not be asked" in w for w in summary["warnings"])

    share = len(outages) / STEPS
    code, out, err = gate(run, "--min-agreement", "0")
    assert code == 3 and "gate failed" in out
    reason = (
        f"undecided for infrastructure: {len(outages)} of {STEPS} ({share:.1%}) > 5%: "
        f"judge_http_5xx {len(outages)}"
    )
    assert reason in err and f"NOT met: {reason}" in out
    code, out, _ = gate(run, "--min-agreement", "0", "--max-undecided", "0.6")
    assert code == 0 and "gate passed" in out
    assert f"the {len(outages)} undecided counted all wrong or all right: exact " in out
    assert f"met: undecided for infrastructure: {len(outages)} of {STEPS}" in out
    code, _, err = gate(run, "--max-undecided", f"{share - 0.01:.4f}")
    assert code == 3 and "judge_http_5xx" in err  # a bar of its own, without another


def test_a_judge_that_answers_without_a_verdict_leaves_answers_unscored(tmp_path: Path) -> None:
    with FakeOpenAI(reply=lambda body: "They look alike to me.") as judge:
        run, output = replay_judged(tmp_path, judge)
    records = list(read_scores(run / "scores.jsonl"))
    unscored = [r for r in records if r.status == "unscored"]
    assert unscored and not any(r.status == "judge_error" for r in records)
    assert all(r.error_kind is None and r.bucket == "unscored" for r in unscored)
    counts = json.loads((run / "summary.json").read_text())["counts"]
    assert counts["unscored"] == len(unscored)
    assert "judge_errors" not in counts and "judge_errors_by_kind" not in counts
    assert "judge_http" not in output
    # an invalid verdict is the judge's answer, not an outage: the default bars hold
    code, out, _ = gate(run, "--min-agreement", "0")
    assert code == 0, out
    assert f"met: undecided for infrastructure: 0 of {STEPS} (0.0%) <= 5%" in out


def test_bounds_hold_the_figures_a_working_judge_gives(tmp_path: Path) -> None:
    with FakeOpenAI(reply=verdict) as judge:
        run, _ = replay_judged(tmp_path, judge)
        questions = sorted(judge.requests)
    truth = json.loads((run / "summary.json").read_text())
    assert truth["counts"]["decided"] == STEPS and "undecided_bounds" not in truth
    with FakeOpenAI(reply=verdict) as failing:  # the same judge, down for every other question
        failing.faults = {question: ["500"] * 2 for question in questions[::2]}
        summary, output = score_again(run, failing)
    counts, bounds = summary["counts"], summary["undecided_bounds"]
    undecided = STEPS - counts["decided"]
    assert counts["judge_errors"] == len(questions[::2]) == undecided == bounds["undecided"]
    for figure in ("agreement", "strict"):
        low, high = bounds[figure]
        assert low <= truth["overall"][figure]["mean"] <= high
        assert high - low == pytest.approx(undecided / STEPS, abs=1e-6)
        assert low <= summary["overall"][figure]["mean"] <= high
    assert (
        f"over all {STEPS} answers, the {undecided} undecided counted all wrong or all right: "
        f"exact {bounds['strict'][0]:.3f}–{bounds['strict'][1]:.3f} · "
        f"agreement {bounds['agreement'][0]:.3f}–{bounds['agreement'][1]:.3f}"
    ) in output
