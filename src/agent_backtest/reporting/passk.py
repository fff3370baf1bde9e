"""pass^k and pass@k over benchmark cases (or a simulate run's repeated flows), each with an
interval clustered by case.

With ``c`` successes in ``n`` rollouts of a case, the unbiased estimates (Chen et al. 2021 for
pass@k; Yao et al. 2024, τ-bench, for pass^k) are

    pass@k = 1 − C(n − c, k) / C(n, k)     some one of k rollouts succeeds
    pass^k = C(c, k) / C(n, k)             all k rollouts succeed

and the benchmark's figure is their mean over cases. Cases are the units of the interval: each
case contributes one value, and the interval is the clustered rate interval of
:func:`agent_backtest.statistics.clustered_mean` over them, so rollouts of one case never count
as independent draws.
"""

from __future__ import annotations

from collections.abc import Mapping
from math import comb

from agent_backtest.statistics import Estimate, clustered_mean

__all__ = ["over_cases", "pass_at_k", "pass_hat_k"]


def pass_hat_k(successes: int, rollouts: int, k: int) -> float:
    """The chance that k rollouts drawn from ``rollouts`` all succeed."""
    _check(successes, rollouts, k)
    return comb(successes, k) / comb(rollouts, k)


def pass_at_k(successes: int, rollouts: int, k: int) -> float:
    """The chance that at least one of k rollouts drawn from ``rollouts`` succeeds."""
    _check(successes, rollouts, k)
    return 1.0 - comb(rollouts - successes, k) / comb(rollouts, k)


def over_cases(counts: Mapping[str, tuple[int, int]], k: int, at: bool = False) -> Estimate:
    """pass^k (or pass@k with ``at``) over cases given as ``{case: (successes, rollouts)}``.

    Cases with fewer than k graded rollouts cannot give the figure and are left out; the
    estimate's ``n`` says how many cases it rests on.
    """
    estimator = pass_at_k if at else pass_hat_k
    usable = {case: sn for case, sn in counts.items() if sn[1] >= k}
    values = [estimator(c, n, k) for c, n in usable.values()]
    return clustered_mean(values, list(usable))


def _check(successes: int, rollouts: int, k: int) -> None:
    if not 0 <= successes <= rollouts or not 1 <= k <= rollouts:
        raise ValueError(
            f"need 0 ≤ successes ≤ rollouts and 1 ≤ k ≤ rollouts: {successes}, {rollouts}, {k}"
        )
