"""The beta and Student's t distributions the intervals of :mod:`agent_backtest.statistics`
need: the regularized incomplete beta function, its inverse, and t's tail and quantile.

They are written here rather than imported from scipy because loading ``scipy.special`` (with
numpy) takes about 0.55 s, more than a quarter of the time ``abt score`` may take on 10,000
answers, and every summary needs an interval. The functions are the textbook ones: the
incomplete beta by its continued fraction (evaluated by the modified Lentz method), where it
converges fast, and by the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) elsewhere; the inverse by
Newton's method kept inside a bracket that bisection narrows when a step would leave it. The
tests hold them to scipy's values within 1e-10 over the arguments the intervals use.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

EPSILON = 1e-15  # relative change at which the continued fraction stops
TINY = 1e-300  # keeps Lentz's denominators off zero
SMALLEST = 1e-300  # the least quantile told apart from 0
NEWTON_STOP = 1e-14  # relative step below which the quantile is taken as found
MAX_TERMS = 100_000  # the continued fraction needs about √(max(a, b)) terms; this is a guard


def beta_cdf(x: float, a: float, b: float) -> float:
    """I_x(a, b): the probability that a Beta(a, b) variable is at most ``x``."""
    return _beta_cdf(x, a, b, _log_beta(a, b))


def _beta_cdf(x: float, a: float, b: float, log_beta: float) -> float:
    """:func:`beta_cdf`, given log B(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    # x^a (1 − x)^b / B(a, b), the factor before the continued fraction
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - log_beta)
    # The continued fraction converges quickly below the mean; above it, use the mirror.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _fraction(x, a, b) / a
    return 1.0 - front * _fraction(1.0 - x, b, a) / b


@lru_cache(maxsize=1 << 14)
def beta_quantile(p: float, a: float, b: float) -> float:
    """The x with I_x(a, b) = ``p``: the p-th quantile of Beta(a, b) (cached: groups with the
    same counts ask for the same bounds, 42% of a summary's on BFCL's tools)."""
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    low, high = 0.0, 1.0
    log_beta = _log_beta(a, b)
    x = _start(p, a, b, log_beta)
    for _ in range(400):
        error = _beta_cdf(x, a, b, log_beta) - p
        if error == 0.0:
            return x
        if error > 0.0 and x <= SMALLEST:
            return 0.0  # the quantile is below every float kept here
        if error < 0.0:
            low = x
        else:
            high = x
        candidate = _halley(x, error, a, b, log_beta)
        if not low < candidate < high:  # also when it is NaN
            # The step would leave the bracket: halve it (geometrically near 0, where roots
            # of small a lie many orders of magnitude below the bracket's top).
            candidate = (
                math.exp((math.log(max(low, SMALLEST)) + math.log(high)) / 2)
                if high < 1e-3
                else (low + high) / 2
            )
        if abs(candidate - x) <= NEWTON_STOP * x:
            return candidate
        x = candidate
    return x


def _halley(x: float, error: float, a: float, b: float, log_beta: float) -> float:
    """Halley's step from ``x`` where I_x(a, b) − p = ``error``; NaN where it cannot be taken.

    Newton's step error / density is corrected by the density's own slope, which brings the
    quantile in about half the evaluations of the function. The density is kept in logs: near
    0 with a < 1 it overflows a float long before the step does.
    """
    log_density = (a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x) - log_beta
    if log_density < -700.0:
        return math.nan
    newton = error * math.exp(-log_density)
    slope = (a - 1.0) / x - (b - 1.0) / (1.0 - x)  # the density's derivative over itself
    return x - newton / (1.0 - 0.5 * min(1.0, max(-1.0, newton * slope)))


def t_sf(t: float, df: float) -> float:
    """P(T > ``t``) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * beta_cdf(df / (df + t * t), df / 2.0, 0.5)
    return tail if t >= 0.0 else 1.0 - tail


@lru_cache(maxsize=4096)
def t_two_sided_quantile(df: int, alpha: float) -> float:
    """The t with P(|T| > t) = ``alpha`` for ``df`` degrees of freedom (cached: the intervals
    of one summary ask for a few values of ``df`` thousands of times)."""
    x = beta_quantile(alpha, df / 2.0, 0.5)  # P(|T| > t) = I_{df/(df+t²)}(df/2, 1/2)
    return math.sqrt(df * (1.0 - x) / x)


@lru_cache(maxsize=16)
def normal_quantile(p: float) -> float:
    """The p-th quantile of the standard normal distribution."""
    return NormalDist().inv_cdf(p)


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _fraction(x: float, a: float, b: float) -> float:
    """The continued fraction of I_x(a, b), by the modified Lentz method: each round takes
    the even term m(b − m)x / ((a + 2m − 1)(a + 2m)) and the odd one
    −(a + m)(a + b + m)x / ((a + 2m)(a + 2m + 1))."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > TINY else TINY)
    value = d
    for m in range(1, MAX_TERMS):
        even = a + 2.0 * m
        term = m * (b - m) * x / ((even - 1.0) * even)
        d = 1.0 + term * d
        d = 1.0 / (d if abs(d) > TINY else TINY)
        c = 1.0 + term / c
        c = c if abs(c) > TINY else TINY
        value *= c * d
        term = -(a + m) * (a + b + m) * x / (even * (even + 1.0))
        d = 1.0 + term * d
        d = 1.0 / (d if abs(d) > TINY else TINY)
        c = 1.0 + term / c
        c = c if abs(c) > TINY else TINY
        change = c * d
        value *= change
        if abs(change - 1.0) <= EPSILON:
            return value
    raise ArithmeticError(f"the incomplete beta fraction did not converge at x={x}, a={a}, b={b}")


def _start(p: float, a: float, b: float, log_beta: float) -> float:
    """A first guess at the quantile: the normal approximation where both shapes exceed 1,
    else the leading term of the tail the quantile lies in (I_x ≈ x^a / (a B) near 0,
    1 − I_x ≈ (1 − x)^b / (b B) near 1). The bracket of :func:`beta_quantile` makes up for a
    poor guess."""
    if a > 1.0 and b > 1.0:
        total = a + b
        guess = a / total + normal_quantile(p) * math.sqrt(a * b / (total * total * (total + 1)))
        if 0.0 < guess < 1.0:
            return guess
    if p < _beta_cdf(a / (a + b), a, b, log_beta):
        guess = math.exp((math.log(p * a) + log_beta) / a)
    else:
        guess = 1.0 - math.exp((math.log((1.0 - p) * b) + log_beta) / b)
    return min(max(guess, SMALLEST), 1.0 - 1e-16)
