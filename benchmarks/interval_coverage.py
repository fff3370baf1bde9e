"""Coverage of abt's 95% intervals on simulated sessions, with fixed seeds.

A simulated run has G sessions of 2 to 30 steps. Each session has its own propensity, drawn from
a Beta distribution with mean p and intra-session correlation ρ (steps of a session agree more
with each other than with other sessions'), and each step is a Bernoulli draw of it. The rate's
interval (:func:`clustered_mean`) covers the true p in the share of simulated runs printed.
For a paired difference (:func:`paired_difference`), candidate B's session propensity is A's
shifted by p_B − p_A plus a little noise (clipped to [0, 1]), both answer the same steps, and
the interval must cover the true mean difference (found by a large seeded Monte Carlo).
A 95% interval should cover about 0.95; below 0.93 is too narrow.

    python benchmarks/interval_coverage.py [--runs 2000] [--seed 20261201]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from agent_backtest.statistics import clustered_mean, paired_difference

SESSIONS = (5, 10, 30, 100)
RATES = (0.5, 0.8, 0.9, 0.95, 0.97, 0.99)
CORRELATIONS = (0.05, 0.3, 0.5)
STEPS = (2, 30)  # steps per session, drawn uniformly: the sizes real traces show
DIFFERENCES = ((0.8, 0.8), (0.8, 0.7), (0.95, 0.85), (0.9, 0.88))


def propensity(rng: random.Random, p: float, rho: float) -> float:
    """One session's propensity: Beta with mean ``p`` and intra-class correlation ``rho``."""
    size = (1 - rho) / rho
    return rng.betavariate(p * size, (1 - p) * size)


def rate_covers(rng: random.Random, sessions: int, p: float, rho: float) -> bool:
    """One simulated run: does the rate's interval hold the true rate?"""
    values, clusters = [], []
    for session in range(sessions):
        theta = propensity(rng, p, rho)
        for _ in range(rng.randint(*STEPS)):
            values.append(float(rng.random() < theta))
            clusters.append(str(session))
    estimate = clustered_mean(values, clusters)
    return estimate.low is not None and estimate.low <= p <= estimate.high


def shifted(rng: random.Random, theta_a: float, pa: float, pb: float) -> float:
    """B's propensity in a session where A's is ``theta_a``."""
    return min(1.0, max(0.0, theta_a + (pb - pa) + rng.gauss(0.0, 0.05)))


def true_difference(pa: float, pb: float, rho: float) -> float:
    """The mean of θ_B − θ_A, by a seeded Monte Carlo (the clipping moves it off pb − pa)."""
    rng = random.Random(99)
    draws = 200_000
    total = 0.0
    for _ in range(draws):
        theta_a = propensity(rng, pa, rho)
        total += shifted(rng, theta_a, pa, pb) - theta_a
    return total / draws


def difference_covers(
    rng: random.Random, sessions: int, pa: float, pb: float, rho: float, truth: float
) -> bool:
    """One simulated comparison: does the paired difference's interval hold the truth?"""
    pairs = []
    for session in range(sessions):
        theta_a = propensity(rng, pa, rho)
        theta_b = shifted(rng, theta_a, pa, pb)
        for _ in range(rng.randint(*STEPS)):
            step = rng.random()  # the same step for both: their answers are paired
            pairs.append((float(step < theta_a), float(step < theta_b), str(session)))
    estimate = paired_difference(pairs).estimate
    return estimate.low is not None and estimate.low <= truth <= estimate.high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated runs per cell")
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    cells = [f"p={p} ρ={rho}" for p in RATES for rho in CORRELATIONS]
    print(f"rate intervals ({args.runs} runs per cell)")
    print("sessions | " + " | ".join(cells) + " | lowest")
    for sessions in SESSIONS:
        row = [
            sum(rate_covers(rng, sessions, p, rho) for _ in range(args.runs)) / args.runs
            for p in RATES
            for rho in CORRELATIONS
        ]
        print(f"{sessions:>8} | " + " | ".join(f"{c:.3f}" for c in row) + f" | {min(row):.3f}")
    cells = [f"{pa}→{pb} ρ={rho}" for pa, pb in DIFFERENCES for rho in CORRELATIONS]
    truths = {
        (pa, pb, rho): true_difference(pa, pb, rho)
        for pa, pb in DIFFERENCES
        for rho in CORRELATIONS
    }
    print(f"\npaired differences ({args.runs} runs per cell)")
    print("sessions | " + " | ".join(cells) + " | lowest")
    for sessions in SESSIONS:
        row = [
            sum(
                difference_covers(rng, sessions, pa, pb, rho, truths[pa, pb, rho])
                for _ in range(args.runs)
            )
            / args.runs
            for pa, pb in DIFFERENCES
            for rho in CORRELATIONS
        ]
        print(f"{sessions:>8} | " + " | ".join(f"{c:.3f}" for c in row) + f" | {min(row):.3f}")


if __name__ == "__main__":
    main()
