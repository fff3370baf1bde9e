"""The one-function path for parallel calls gives every answer the general path's verdict.

Answers with several calls on each side and no equivalent tools are paired by
``calls._parallel``, which asks the same weights and bounds in the same order as the general
``calls._several`` with its lazy assignment. Both are run here on BFCL's parallel questions
(data from the installed ``bfcl-eval`` package): each seeded prediction as given, shuffled, with
a call dropped and with one repeated, against the answer key and against the correct calls,
with lenient and exact strings. Every field of every verdict must be the same.

Needs ``pip install --no-deps bfcl-eval``; skipped otherwise.
"""

from __future__ import annotations

import random

import pytest

from agent_backtest.scoring import calls as calls_module
from agent_backtest.scoring.calls import CallsMatch, match_calls
from agent_backtest.trace.models import ToolCall
from tests.optional import require
from tests.scoring.bfcl_cases import (
    AGENT,
    Pair,
    build_pairs,
    load_checker,
    load_entries,
    require_checker,
)

require("bfcl_eval", "pip install --no-deps bfcl-eval==2026.3.23")


@pytest.fixture(autouse=True)
def bfcl_installed() -> None:
    """Skip without bfcl-eval on a developer machine; under CI its absence is a failure."""
    require_checker(load_checker())


@pytest.fixture(scope="module")
def parallel_pairs() -> list[Pair]:
    """The seeded pairs of BFCL's two parallel categories whose golden has several calls."""
    pairs = build_pairs(load_entries(("parallel", "parallel_multiple")))
    return [pair for pair in pairs if len(pair.golden) > 1]


def _variants(calls: list[ToolCall], rng: random.Random) -> list[list[ToolCall]]:
    """The candidate's calls as given, shuffled, one dropped and one repeated."""
    shuffled = list(calls)
    rng.shuffle(shuffled)
    dropped = list(calls)
    del dropped[rng.randrange(len(dropped))]
    return [calls, shuffled, dropped, [*calls, rng.choice(calls)]]


def _general(pair: Pair, calls: list[ToolCall], exact: bool, keyed: bool) -> CallsMatch:
    """The general path's verdict on the same answer."""
    source = pair.key if keyed else pair.golden
    references = calls_module._references(source, pair.golden, not keyed, None).references
    return calls_module._several(
        pair.golden, calls, references, pair.tools, AGENT, exact, not keyed
    )


def test_every_parallel_answer_gets_the_general_paths_verdict(
    parallel_pairs: list[Pair],
) -> None:
    rng = random.Random(29)
    compared = flipped = 0
    for pair in parallel_pairs:
        for calls in _variants(pair.calls, rng):
            if len(calls) < 2:
                continue
            for keyed in (True, False):
                for exact in (False, True):
                    key = pair.key if keyed else None
                    ours = match_calls(pair.golden, calls, pair.tools, AGENT, exact, key)
                    assert ours == _general(pair, calls, exact, keyed), (pair.mutation, calls)
                    compared += 1
                    flipped += len(calls) < len(pair.golden)
    assert compared > 10_000
    assert flipped > 1_000  # answers with fewer calls than the golden's were among them
