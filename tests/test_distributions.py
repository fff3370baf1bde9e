"""The beta and t functions the intervals use, held to scipy's values."""

from __future__ import annotations

import math
import random

import pytest
from scipy.special import betainc, betaincinv, stdtr, stdtrit

from agent_backtest.distributions import (
    beta_cdf,
    beta_quantile,
    normal_quantile,
    t_sf,
    t_two_sided_quantile,
)

TOLERANCE = 1e-10


def close(ours: float, theirs: float) -> bool:
    """Equal within TOLERANCE, relative (absolute below 1e-290, where floats run out)."""
    return abs(ours - theirs) <= TOLERANCE * max(abs(theirs), 1e-290 / TOLERANCE)


def korn_graubard_shapes(count: int) -> list[tuple[float, float, float]]:
    """(a, b, p) as the Korn–Graubard interval asks for them: rates on effective sizes from
    about 1 to 20,000 draws, at both ends of the interval, rates near 0 and 1 included."""
    rng = random.Random(7)
    shapes = []
    for _ in range(count):
        n = 10 ** rng.uniform(0, 4.3)
        rate = rng.choice([rng.random(), 1 / n, 1 - 1 / n, 0.5, rng.random() * 0.01])
        x = rate * n
        if x > 0:
            shapes.append((x, n - x + 1, 0.025))
        if n - x > 0:
            shapes.append((x + 1, n - x, 0.975))
    return shapes


def test_the_beta_quantile_is_scipys() -> None:
    wrong = [
        (a, b, p)
        for a, b, p in korn_graubard_shapes(3000)
        if not close(beta_quantile(p, a, b), float(betaincinv(a, b, p)))
    ]
    assert not wrong


def test_the_beta_cdf_is_scipys() -> None:
    rng = random.Random(3)
    for _ in range(3000):
        a, b, x = 10 ** rng.uniform(-2, 4), 10 ** rng.uniform(-2, 4), rng.random()
        theirs = float(betainc(a, b, x))
        if theirs > 1e-250:  # nearer the floats' end scipy itself gives up digits
            assert close(beta_cdf(x, a, b), theirs), (a, b, x)


def test_a_quantile_below_every_float_is_zero() -> None:
    assert beta_quantile(0.025, 0.0038, 5.29) == 0.0
    assert betaincinv(0.0038, 5.29, 0.025) < 1e-300
    assert beta_quantile(0.0, 2.0, 3.0) == 0.0
    assert beta_quantile(1.0, 2.0, 3.0) == 1.0


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 29, 99, 999, 99_999])
def test_t_is_scipys(df: int) -> None:
    assert close(t_two_sided_quantile(df, 0.05), float(stdtrit(df, 0.975)))
    for t in (0.0, 0.3, 1.0, 2.0, 4.5, 30.0, -2.5):
        assert close(t_sf(t, df), float(stdtr(df, -t))), t


def test_the_normal_quantile() -> None:
    assert normal_quantile(0.975) == pytest.approx(1.959963984540054, abs=1e-12)
    assert math.isclose(normal_quantile(0.5), 0.0, abs_tol=1e-15)
