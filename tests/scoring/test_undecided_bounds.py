"""The bounds of a run's figures over every answer, and the summary fields written only when a
run has what they count (undecided answers, judge errors)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_backtest.runs.documents import document_bytes
from agent_backtest.runs.scores import ScoreRecord
from agent_backtest.runs.summary import RunFacts, ScoringSettings, Summary
from agent_backtest.scoring.run import ScoreSettings
from agent_backtest.scoring.summary import summarise


def record(index: int, status: str, **fields: Any) -> ScoreRecord:
    return ScoreRecord(
        unit_id=f"u{index}",
        repeat=0,
        session_id=f"s{index % 3}",
        kind="action",
        model="openai/candidate",
        status=status,
        scorer="abt-scorer/2",
        scoring_id="x",
        **fields,
    )


def decided(index: int, score: float) -> ScoreRecord:
    return record(
        index, "scored", bucket="match", score=score, strict=score == 1.0, method="matcher"
    )


def summary_of(records: list[ScoreRecord]) -> Summary:
    settings = ScoringSettings.model_validate({**ScoreSettings().as_dict(), "scoring_id": "x"})
    facts = RunFacts(
        model="openai/candidate", k=1, status="completed", units=len(records), partial=False
    )
    return summarise(records, settings, facts, {})


def test_bounds_count_every_undecided_answer_all_wrong_then_all_right() -> None:
    summary = summary_of(
        [
            decided(0, 1.0),
            decided(1, 0.5),
            decided(2, 0.0),
            record(3, "infra_error", error_kind="timeout"),
            record(4, "judge_error", error_kind="judge_http_5xx"),
            record(5, "no_judge", bucket="text_not_judged", similarity=0.4),
        ]
    )
    bounds = summary.undecided_bounds
    assert bounds is not None and bounds.undecided == 3
    assert bounds.agreement == pytest.approx((1.5 / 6, 4.5 / 6), abs=1e-6)  # 6 digits kept
    assert bounds.strict == pytest.approx((1 / 6, 4 / 6), abs=1e-6)
    counts = summary.counts
    assert (counts.infra_errors, counts.judge_errors, counts.infrastructure_undecided) == (1, 1, 2)
    assert counts.infrastructure_kinds == {"timeout": 1, "judge_http_5xx": 1}
    written = json.loads(document_bytes(summary))
    assert written["undecided_bounds"]["undecided"] == 3
    assert written["counts"]["judge_errors_by_kind"] == {"judge_http_5xx": 1}
    assert Summary.model_validate(written) == summary  # read back as written


@pytest.mark.parametrize("scores", [[1.0, 0.5], []])
def test_a_run_decided_whole_or_not_at_all_has_no_bounds_and_no_new_fields(
    scores: list[float],
) -> None:
    records = [decided(i, s) for i, s in enumerate(scores)] or [
        record(0, "infra_error", error_kind="timeout")
    ]
    summary = summary_of(records)
    assert summary.undecided_bounds is None
    written = json.loads(document_bytes(summary))
    assert "undecided_bounds" not in written
    assert "judge_errors" not in written["counts"]
    assert "judge_errors_by_kind" not in written["counts"]
    assert Summary.model_validate(written) == summary
