"""``""`` in a BFCL possible answer: leaving the parameter out where the function allows it, and
for a string parameter also a value that may be sent. Each case is checked against BFCL's own
checker on a real question (``parallel_multiple_119``, whose required string ``league_name``
lists ``["Premier League", "PL", ""]``), so the verdicts are BFCL's, not ours restated.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.scoring.bfcl_cases import (
    Entry,
    Pair,
    answer_key,
    as_calls,
    bfcl_valid,
    load_checker,
    load_entries,
    ours_equal,
    require_checker,
    tools_of,
)

CHECKER = load_checker()
QUESTION = "parallel_multiple_119"
FUNCTION = "league_stats.get_top_scorer"


@pytest.fixture(scope="module")
def entry() -> Entry:
    require_checker(CHECKER)
    (found,) = [e for e in load_entries() if e.id == QUESTION]
    return found


def verdicts(entry: Entry, league: Any, only_empty: bool = False) -> tuple[bool, bool]:
    """(BFCL's, ours) on the question's first right answer with ``league_name`` set to
    ``league`` (left out for ``...``); ``only_empty``: the possible answer lists only ``""``."""
    entry = copy.deepcopy(entry)
    if only_empty:
        for call in entry.ground_truth:
            if FUNCTION in call:
                call[FUNCTION]["league_name"] = [""]
    prediction = []
    for call in entry.ground_truth:
        ((name, params),) = call.items()
        arguments = {key: values[0] for key, values in params.items() if values[0] != ""}
        if name == FUNCTION:
            arguments.pop("league_name", None)
            if league is not ...:
                arguments["league_name"] = league
        prediction.append({name: arguments})
    golden = as_calls(prediction)
    pair = Pair(entry, "probe", prediction, golden, golden, answer_key(entry), tools_of(entry))
    return bfcl_valid(CHECKER, pair), ours_equal(pair)


def test_the_parameter_is_required_and_lists_the_empty_string(entry: Entry) -> None:
    function = next(f for f in entry.functions if f["name"] == FUNCTION)
    assert "league_name" in function["parameters"]["required"]
    assert function["parameters"]["properties"]["league_name"]["type"] == "string"
    call = next(c[FUNCTION] for c in entry.ground_truth if FUNCTION in c)
    assert "" in call["league_name"]


@pytest.mark.parametrize(
    ("league", "expected"),
    [("Premier League", True), ("", True), ("La Liga", False), (..., False)],
    ids=["listed value", "empty string sent", "other value", "left out"],
)
def test_a_listed_empty_string_is_a_value_and_a_required_parameter_is_never_excused(
    entry: Entry, league: Any, expected: bool
) -> None:
    assert verdicts(entry, league) == (expected, expected)


@pytest.mark.parametrize(
    ("league", "expected"),
    [("", True), ("Premier League", False), (..., False)],
    ids=["empty string sent", "another value", "left out"],
)
def test_a_key_whose_only_value_is_the_empty_string_matches_an_answer_that_sends_it(
    entry: Entry, league: Any, expected: bool
) -> None:
    assert verdicts(entry, league, only_empty=True) == (expected, expected)
