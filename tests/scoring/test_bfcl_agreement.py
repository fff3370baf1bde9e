"""Agreement of the argument matcher with the Berkeley Function Calling Leaderboard's AST checker.

Pairs are built from BFCL's ``simple_python``, ``multiple``, ``parallel`` and
``parallel_multiple`` questions (data from the installed ``bfcl-eval`` package): the correct
prediction and seeded mutations of it (see ``bfcl_cases.MUTATIONS``). BFCL's valid/invalid is
compared with our ``equal``; every disagreement must be one of the deliberate differences listed
in ``docs/bfcl-differences.md``, each proven by BFCL's own checker agreeing with us once that one
difference is taken out of the pair.

Needs ``pip install --no-deps bfcl-eval``; skipped otherwise.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.optional import require
from tests.scoring import bfcl_cases
from tests.scoring.bfcl_cases import (
    Pair,
    bfcl_valid,
    build_pairs,
    explain,
    load_checker,
    load_entries,
    ours_equal,
    probe_pairs,
    require_checker,
)

require("bfcl_eval", "pip install --no-deps bfcl-eval==2026.3.23")

CHECKER = load_checker()


@pytest.fixture(autouse=True)
def bfcl_installed() -> None:
    """Skip without bfcl-eval on a developer machine; under CI its absence is a failure."""
    require_checker(CHECKER)


REQUIRED_AGREEMENT = 0.999


@pytest.fixture(scope="module")
def entries() -> list[bfcl_cases.Entry]:
    """BFCL's questions of the four Python AST categories."""
    return load_entries()


@pytest.fixture(scope="module")
def pairs(entries: list[bfcl_cases.Entry]) -> list[Pair]:
    """The seeded (prediction, possible answer) pairs."""
    return build_pairs(entries)


@pytest.fixture(scope="module")
def verdicts(pairs: list[Pair]) -> list[tuple[Pair, bool, bool]]:
    """(pair, BFCL valid, our equal) for every pair."""
    return [(pair, bfcl_valid(CHECKER, pair), ours_equal(pair)) for pair in pairs]


def test_agreement_with_bfcl(
    verdicts: list[tuple[Pair, bool, bool]], capsys: pytest.CaptureFixture[str]
) -> None:
    """At least 99.9% agreement, and every disagreement a documented deliberate difference."""
    disagreements = [(pair, ours) for pair, bfcl, ours in verdicts if bfcl != ours]
    reasons = Counter(explain(CHECKER, pair, ours) for pair, ours in disagreements)
    agreeing = len(verdicts) - len(disagreements)
    share = agreeing / len(verdicts)
    with capsys.disabled():
        print(
            f"\nBFCL agreement: {agreeing:,} of {len(verdicts):,} pairs ({share:.2%}); "
            f"deliberate differences: {dict(reasons)}"
        )
    unexplained = [
        (pair.entry.id, pair.mutation, pair.prediction)
        for pair, ours in disagreements
        if explain(CHECKER, pair, ours) is None
    ]
    assert not unexplained, f"disagreements no deliberate difference explains: {unexplained[:5]}"
    assert share >= REQUIRED_AGREEMENT


def test_tab_and_newline_padding_agrees_with_bfcl(
    verdicts: list[tuple[Pair, bool, bool]],
) -> None:
    """A string padded with a tab or newline is a different value to BFCL and to us; padded
    with spaces it is the same to both."""
    padded = [
        (pair, bfcl, ours) for pair, bfcl, ours in verdicts if pair.mutation == "string_whitespace"
    ]
    assert all(bfcl == ours for _, bfcl, ours in padded)
    refused = Counter(
        ("\t" in text or "\n" in text)
        for pair, bfcl, _ in padded
        if not bfcl
        for call in pair.prediction
        for args in call.values()
        for text in args.values()
        if isinstance(text, str)
    )
    assert refused[True] > 100


def test_mutations_are_seeded(entries: list[bfcl_cases.Entry], pairs: list[Pair]) -> None:
    """The same seed builds the same pairs; another seed builds other mutations."""
    again = build_pairs(entries)
    assert [p.prediction for p in again] == [p.prediction for p in pairs]
    other = build_pairs(entries, seed=bfcl_cases.SEED + 1)
    assert [p.prediction for p in other] != [p.prediction for p in pairs]


def test_every_mutation_is_exercised(verdicts: list[tuple[Pair, bool, bool]]) -> None:
    """Each mutation kind yields pairs, and the pairs hold both verdicts where they should."""
    by_kind: dict[str, Counter[bool]] = {}
    for pair, bfcl, _ours in verdicts:
        by_kind.setdefault(pair.mutation, Counter())[bfcl] += 1
    assert set(by_kind) == set(bfcl_cases.MUTATIONS)
    # Kinds that keep a right answer are mostly valid; kinds that break one mostly invalid.
    for kind in ("correct", "alternative", "reordered", "string_case"):
        assert by_kind[kind][True] > by_kind[kind][False], kind
    for kind in ("wrong_value", "wrong_type", "extra_param", "call_count", "wrong_function"):
        assert by_kind[kind][False] > by_kind[kind][True], kind
    for kind in ("missing_param", "int_float", "string_punctuation", "string_whitespace"):
        assert by_kind[kind][True] and by_kind[kind][False], kind


def test_deliberate_differences_not_in_the_mutation_set(
    entries: list[bfcl_cases.Entry], capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON-string containers, explicit defaults and nulls: BFCL refuses, we accept, by design."""
    counts = {}
    for kind, probes in probe_pairs(entries).items():
        assert probes, kind
        outcomes = Counter((bfcl_valid(CHECKER, pair), ours_equal(pair)) for pair in probes)
        counts[kind] = (len(probes), outcomes[False, True])
        assert outcomes[False, True] == len(probes), (kind, outcomes)
    with capsys.disabled():
        print(f"\nBFCL probes (pairs, BFCL refuses while we accept): {counts}")
