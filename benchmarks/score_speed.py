"""Argument-matcher throughput against BFCL's own AST checker, on the same pairs, one core.

The pairs are those of ``tests/scoring/test_bfcl_agreement.py``: every question of BFCL's
``simple_python``, ``multiple``, ``parallel`` and ``parallel_multiple`` categories with its correct
prediction and seeded mutations. Timed per pass, alternating the two checkers:

* ``bfcl``: ``ast_checker`` (valid/invalid, stops at the first error, pairs parallel calls
  greedily);
* ``abt key``: :func:`match_calls` with BFCL's possible answer as the answer key, what BFCL
  checks (every mismatch with its path, per-parameter scores, parallel calls assigned
  optimally). The memos of rules and compiled keys are emptied before each pass, so every tool
  schema is walked and every key compiled again once per pass (the ~13 pairs of one question
  share its tool definitions and key, as the repeats of a unit share theirs);
* ``abt golden``: :func:`match_calls` of the candidate against the correct prediction's
  recorded arguments (what scoring against production does).

Needs ``pip install --no-deps bfcl-eval``.

    python benchmarks/score_speed.py [--passes 7] [--cpu 0]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.scoring.bfcl_cases import (  # noqa: E402
    AGENT,
    MODEL,
    Pair,
    build_pairs,
    load_checker,
    load_entries,
    python_language,
)

from agent_backtest.scoring.calls import clear_memos, match_calls  # noqa: E402


def pin(cpu: int) -> None:
    """Run on one core, where the platform allows it."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})


def bfcl_pass(checker: object, pairs: list[Pair]) -> Callable[[], None]:
    """One pass of BFCL's checker over the pairs."""
    language = python_language()
    check = checker.ast_checker  # type: ignore[attr-defined]

    def run() -> None:
        for pair in pairs:
            check(
                pair.entry.functions,
                pair.prediction,
                pair.entry.ground_truth,
                language,
                pair.entry.category,
                MODEL,
            )

    return run


def key_pass(pairs: list[Pair]) -> Callable[[], None]:
    """One pass of the matcher against the answer keys (rules and keys rebuilt each pass)."""

    def run() -> None:
        clear_memos()
        for pair in pairs:
            match_calls(pair.golden, pair.calls, pair.tools, AGENT, answer_key=pair.key)

    return run


def golden_pass(pairs: list[Pair]) -> Callable[[], None]:
    """One pass of the matcher against production-style goldens: the correct calls."""

    def run() -> None:
        clear_memos()
        for pair in pairs:
            match_calls(pair.golden, pair.calls, pair.tools, AGENT)

    return run


def timed(run: Callable[[], None]) -> float:
    """CPU seconds one pass takes (other processes on the machine do not count), with the
    garbage collector held off as in a steady run."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        run()
        return time.process_time() - start
    finally:
        gc.enable()


def main() -> None:
    """Build the pairs, time alternating passes, print pairs per second."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=7)
    parser.add_argument("--cpu", type=int, default=0)
    args = parser.parse_args()
    checker = load_checker()
    if checker is None:
        sys.exit("bfcl_eval is not installed: pip install --no-deps bfcl-eval")
    pin(args.cpu)
    pairs = build_pairs(load_entries())
    parallel = sum(1 for pair in pairs if len(pair.calls) > 1 or len(pair.key) > 1)
    print(
        f"{len(pairs):,} pairs ({parallel:,} with several calls), {args.passes} passes, "
        f"cpu {args.cpu}"
    )
    runs = {
        "bfcl": bfcl_pass(checker, pairs),
        "abt key": key_pass(pairs),
        "abt golden": golden_pass(pairs),
    }
    for run in runs.values():  # warm-up: imports, caches of the interpreter
        run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.passes):
        for name, run in runs.items():
            times[name].append(timed(run))
    for name, seconds in times.items():
        best, median = min(seconds), statistics.median(seconds)
        print(
            f"{name:13s} best {len(pairs) / best:9,.0f} pairs/s   "
            f"median {len(pairs) / median:9,.0f} pairs/s   "
            f"x BFCL (medians) {statistics.median(times['bfcl']) / median:.2f}"
        )


if __name__ == "__main__":
    main()
