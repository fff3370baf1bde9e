"""Intervals and paired tests against independent computations and the properties they promise."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats

from agent_backtest.statistics import (
    ClusteredMeans,
    agreement_of,
    clustered_mean,
    paired_difference,
)


def korn_graubard(rate: float, size: float, sessions: int) -> tuple[float, float]:
    """The Korn–Graubard interval written out from the paper's recipe, with scipy.stats."""
    n = size * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, sessions - 1)) ** 2
    x = rate * n
    low = 0.0 if x == 0 else stats.beta.ppf(0.025, x, n - x + 1)
    high = 1.0 if x == n else stats.beta.ppf(0.975, x + 1, n - x)
    return low, high


def test_clustered_standard_error_by_hand() -> None:
    # Sessions a: [1, 1, 0], b: [0, 0], c: [1]. Mean 3/6 = 0.5.
    # Residual sums: a = 0.5+0.5-0.5 = 0.5; b = -0.5-0.5 = -1.0; c = 0.5.
    # Σ squares = 0.25 + 1 + 0.25 = 1.5; times G/(G-1) = 3/2 → 2.25; sqrt = 1.5; / n=6 → 0.25.
    estimate = clustered_mean([1, 1, 0, 0, 0, 1], ["a", "a", "a", "b", "b", "c"])
    assert estimate.mean == 0.5
    assert estimate.se == pytest.approx(0.25)
    assert (estimate.n, estimate.clusters) == (6, 3)
    # n* = 0.25 / 0.25² = 4 (fewer than the 6 values), then the t correction with 2 df
    expected = korn_graubard(0.5, 4.0, 3)
    assert (estimate.low, estimate.high) == pytest.approx(expected, abs=1e-9)
    assert estimate.low > 0.0 and estimate.high < 1.0


def test_clustering_widens_the_interval_when_sessions_move_together() -> None:
    values = [1.0] * 10 + [0.0] * 10
    independent = clustered_mean(values, [str(i) for i in range(20)])
    by_session = clustered_mean(values, [f"s{i % 4}" if i < 10 else f"t{i % 2}" for i in range(20)])
    assert by_session.se > independent.se
    assert by_session.high - by_session.low > independent.high - independent.low
    # With one value per cluster it is the usual standard error (with the G/(G-1) correction).
    assert independent.se == pytest.approx(math.sqrt(0.25 / 19))


def test_missing_is_not_zero() -> None:
    assert clustered_mean([], []).mean is None
    one_session = clustered_mean([1.0, 0.0], ["s", "s"])
    assert one_session.mean == 0.5 and one_session.se is None and one_session.low is None
    assert paired_difference([]).p_value is None
    assert paired_difference([(1, 0, "s"), (1, 1, "s")]).estimate.low is None


def test_equal_session_means_never_give_a_zero_width_interval() -> None:
    # 30 sessions, each right on 2 of its 3 steps: the clustered SE is 0, the rate is not certain.
    values = [1.0, 1.0, 0.0] * 30
    estimate = clustered_mean(values, [str(i // 3) for i in range(90)])
    assert estimate.se == 0.0
    assert estimate.low < 2 / 3 < estimate.high
    assert (estimate.low, estimate.high) == pytest.approx(korn_graubard(2 / 3, 90, 30), abs=1e-9)


def test_a_rate_of_exactly_one_counts_sessions_as_the_draws() -> None:
    estimate = clustered_mean([1.0] * 8, ["a", "a", "b", "b", "c", "c", "d", "d"])
    assert estimate.mean == 1.0 and estimate.se == 0.0 and estimate.high == 1.0
    assert estimate.low == pytest.approx(korn_graubard(1.0, 4, 4)[0], abs=1e-9)
    assert estimate.low < 0.5  # four sessions do not show a rate near 1
    zero = clustered_mean([0.0] * 6, ["a", "b", "c", "a", "b", "c"])
    assert zero.low == 0.0 and 0.0 < zero.high < 1.0


def test_intervals_narrow_as_sessions_grow() -> None:
    widths = []
    for sessions in (5, 10, 30, 100):
        values = [float(i % 5 != 0) for i in range(sessions * 4)]
        estimate = clustered_mean(values, [str(i // 4) for i in range(sessions * 4)])
        widths.append(estimate.high - estimate.low)
    assert widths == sorted(widths, reverse=True)


def accepted(pairs: list[tuple[float, float, str]]) -> list[float]:
    """The differences δ on a fine grid that the cluster score test does not reject, by brute
    force with scipy.stats (an independent reading of the test's definition)."""
    totals: dict[str, list[float]] = {}
    for a, b, session in pairs:
        totals.setdefault(session, [0.0, 0.0])
        totals[session][0] += b - a
        totals[session][1] += 1
    g = len(totals)
    q = stats.t.ppf(0.975, g - 1)
    kept = []
    for step in range(-2000, 2001):
        delta = step / 2000
        residuals = [d - m * delta for d, m in totals.values()]
        spread = g / (g - 1) * sum(r * r for r in residuals)
        statistic = 0.0 if spread == 0 else sum(residuals) / math.sqrt(spread)
        if abs(statistic) <= q:
            kept.append(delta)
    return kept


def test_a_difference_is_the_set_its_score_test_accepts() -> None:
    rng = random.Random(3)
    pairs = [
        (float(rng.random() < 0.9), float(rng.random() < 0.75), str(i // 4)) for i in range(80)
    ]
    test = paired_difference(pairs)
    kept = accepted(pairs)
    assert test.estimate.low == pytest.approx(min(kept), abs=1e-3)
    assert test.estimate.high == pytest.approx(max(kept), abs=1e-3)
    assert test.estimate.low < test.estimate.mean < test.estimate.high


def test_a_difference_of_minus_one_in_two_sessions_is_not_certain() -> None:
    test = paired_difference([(1, 0, "a"), (1, 0, "b")])
    assert test.estimate.mean == -1.0
    assert (test.estimate.low, test.estimate.high) == (-1.0, 1.0)
    assert test.p_value > 0.05
    many = paired_difference([(1, 0, str(i)) for i in range(12)])
    assert many.estimate.high < 0.0 and many.p_value < 0.05


def test_one_pair_a_session_is_mcnemars_score_test() -> None:
    # 9 pairs right → wrong and 3 wrong → right, each its own session, plus 20 unchanged:
    # T(0) = (3 − 9) / sqrt(G/(G−1) · 12), McNemar's z = −6/sqrt(12) up to G/(G−1).
    pairs = [(1.0, 0.0, f"d{i}") for i in range(9)] + [(0.0, 1.0, f"u{i}") for i in range(3)]
    pairs += [(1.0, 1.0, f"s{i}") for i in range(20)]
    g = 32
    statistic = -6 / math.sqrt(g / (g - 1) * 12)
    expected = 2 * stats.t.sf(abs(statistic), g - 1)
    assert paired_difference(pairs).p_value == pytest.approx(expected)


def test_identical_runs_show_no_change() -> None:
    pairs = [(float(i % 3 == 0), float(i % 3 == 0), str(i // 4)) for i in range(40)]
    test = paired_difference(pairs)
    assert test.estimate.mean == 0.0 and test.p_value == 1.0
    # no pair changed, yet ten sessions cannot show that none ever would
    assert test.estimate.low < 0.0 < test.estimate.high


def test_the_paired_test_and_its_interval_agree_on_significance() -> None:
    rng = random.Random(7)
    decided = {True: 0, False: 0}
    for _ in range(2000):
        sessions = rng.randint(2, 40)
        pa, pb = rng.random(), rng.random()
        pairs = [
            (float(rng.random() < pa), float(rng.random() < pb), str(rng.randrange(sessions)))
            for _ in range(rng.randint(4, 120))
        ]
        test = paired_difference(pairs)
        if test.p_value is None:
            continue
        excludes = test.estimate.low > 0 or test.estimate.high < 0
        assert excludes == (test.p_value < 0.05), (pairs, test)
        decided[excludes] += 1
    assert decided[True] and decided[False]  # both outcomes were exercised


def test_the_paired_difference_accounts_for_sessions() -> None:
    # The same 40 pairs, B losing 8 steps: spread over 8 of 10 sessions it is a clear drop; all
    # in one session of 8 (one bad conversation among five) it is weak evidence.
    spread = [(1.0, 0.0 if i % 4 == 0 and i < 32 else 1.0, str(i // 4)) for i in range(40)]
    lumped = [(1.0, 0.0 if i < 8 else 1.0, str(i // 8)) for i in range(40)]
    assert paired_difference(spread).estimate.mean == paired_difference(lumped).estimate.mean
    assert paired_difference(spread).p_value < 0.05 < paired_difference(lumped).p_value


def test_agreement_of_labels() -> None:
    assert agreement_of(["x", "x", "y"]) == pytest.approx(1 / 3)
    assert agreement_of(["x"]) is None


def test_means_built_a_value_at_a_time_are_clustered_mean_to_the_bit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Scores like 2/3 make a cluster's residual sum depend on the order it is summed in; a
    # small buffer makes the values go to disk and come back several times.
    monkeypatch.setattr(ClusteredMeans, "BUFFERED", 7)
    rng = random.Random(5)
    lists: list[tuple[list[float], list[str]]] = [([], []) for _ in range(4)]
    means = ClusteredMeans()
    ids = [means.mean() for _ in lists]
    for _ in range(2000):
        which = rng.randrange(len(lists))
        value = rng.choice([0.0, 1.0, 2 / 3, 0.1, rng.random()])
        cluster = f"s{rng.randrange(3)}"
        lists[which][0].append(value)
        lists[which][1].append(cluster)
        means.add(ids[which], value, means.cluster(cluster))
    empty = means.mean()
    estimates = means.estimates()
    assert [estimates[i] for i in ids] == [clustered_mean(v, c) for v, c in lists]
    assert estimates[empty] == clustered_mean([], [])


def test_a_value_added_to_a_combination_counts_in_each_of_its_means(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One value in several means at once (overall, its tool, its node…), stored once: each
    # mean is still what clustered_mean makes of its own values, to the bit.
    monkeypatch.setattr(ClusteredMeans, "BUFFERED", 11)
    rng = random.Random(9)
    means = ClusteredMeans()
    ids = [means.mean() for _ in range(5)]
    lists: list[tuple[list[float], list[str]]] = [([], []) for _ in ids]
    groups = [(0, 1), (0, 2, 3), (4,), (0, 1, 2, 3, 4)]
    numbers = [means.combination(ids[i] for i in group) for group in groups]
    for _ in range(1500):
        which = rng.randrange(len(groups))
        value = rng.choice([0.0, 1.0, 2 / 3, 0.3, rng.random()])
        cluster = f"s{rng.randrange(4)}"
        for i in groups[which]:
            lists[i][0].append(value)
            lists[i][1].append(cluster)
        means.add_to(numbers[which], value, means.cluster(cluster))
    estimates = means.estimates()
    assert [estimates[i] for i in ids] == [clustered_mean(v, c) for v, c in lists]
