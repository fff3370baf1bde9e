"""Clustered intervals against a hand-computed example."""

from __future__ import annotations

import math

import pytest

from agent_backtest.statistics import agreement_of, clustered_mean, paired_difference


def test_clustered_standard_error_by_hand() -> None:
    # Sessions a: [1, 1, 0], b: [0, 0], c: [1]. Mean 3/6 = 0.5.
    # Residual sums: a = 0.5+0.5-0.5 = 0.5; b = -0.5-0.5 = -1.0; c = 0.5.
    # Σ squares = 0.25 + 1 + 0.25 = 1.5; times G/(G-1) = 3/2 → 2.25; sqrt = 1.5; / n=6 → 0.25.
    estimate = clustered_mean([1, 1, 0, 0, 0, 1], ["a", "a", "a", "b", "b", "c"])
    assert estimate.mean == 0.5
    assert estimate.se == pytest.approx(0.25)
    assert estimate.low == pytest.approx(0.5 - 1.959964 * 0.25, abs=1e-6)
    assert estimate.high == pytest.approx(0.5 + 1.959964 * 0.25, abs=1e-6)
    assert (estimate.n, estimate.clusters) == (6, 3)


def test_clustering_widens_the_interval_when_sessions_move_together() -> None:
    values = [1.0] * 10 + [0.0] * 10
    independent = clustered_mean(values, [str(i) for i in range(20)])
    by_session = clustered_mean(values, ["s1"] * 10 + ["s2"] * 10)
    assert by_session.se > independent.se
    # With one value per cluster it is the usual standard error (with the G/(G-1) correction).
    assert independent.se == pytest.approx(math.sqrt(0.25 / 19))


def test_missing_is_not_zero() -> None:
    assert clustered_mean([], []).mean is None
    one_session = clustered_mean([1.0, 0.0], ["s", "s"])
    assert one_session.mean == 0.5 and one_session.se is None and one_session.low is None


def test_interval_is_clipped_to_rates() -> None:
    estimate = clustered_mean([1, 1, 1, 0], ["a", "b", "c", "d"])
    assert estimate.high == 1.0 and estimate.low >= 0.0


def test_paired_difference_and_agreement() -> None:
    diff = paired_difference([(1, 0, "a"), (1, 1, "a"), (0, 1, "b"), (1, 0, "c")])
    assert diff.mean == pytest.approx(-0.25) and diff.clusters == 3
    assert agreement_of(["x", "x", "y"]) == pytest.approx(1 / 3)
    assert agreement_of(["x"]) is None


def test_a_rate_of_exactly_one_gets_a_wilson_interval_over_sessions() -> None:
    estimate = clustered_mean([1.0] * 8, ["a", "a", "b", "b", "c", "c", "d", "d"])
    assert estimate.mean == 1.0 and estimate.se == 0.0
    # Wilson with n = 4 sessions: lower = 4 / (4 + 1.96²) ≈ 0.510
    assert estimate.low == pytest.approx(4 / (4 + 1.959964**2), abs=1e-6)
    assert estimate.high == 1.0
    zero = clustered_mean([0.0] * 6, ["a", "b", "c", "a", "b", "c"])
    assert zero.low == 0.0
    assert zero.high == pytest.approx(1 - 3 / (3 + 1.959964**2), abs=1e-6)
