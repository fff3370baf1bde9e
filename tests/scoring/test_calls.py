"""Matching the tool calls of one answer: names, pairing as a set, missing and extra calls."""

from __future__ import annotations

import itertools
import random

import pytest

from agent_backtest.scoring.arguments import Mismatch
from agent_backtest.scoring.assignment import best_assignment, lazy_best_assignment
from agent_backtest.scoring.calls import (
    call_arguments,
    match_calls,
    tool_names_equal,
)
from agent_backtest.trace.models import ToolCall, ToolDef
from agent_backtest.units.agent_config import AgentConfig
from agent_backtest.units.answer_key import ArgumentKey, CallKey

AGENT = AgentConfig(equivalent_tools=[["search_flights", "find_flights"]])
TOOLS = {
    "search_flights": ToolDef(
        name="search_flights",
        parameters={
            "type": "object",
            "properties": {
                "origin": {"type": "string"},
                "destination": {"type": "string"},
                "date": {"type": "string"},
            },
            "required": ["origin", "destination"],
        },
    ),
}


def call(name: str, **arguments: object) -> ToolCall:
    """A tool call with parsed arguments."""
    return ToolCall(name=name, arguments=arguments)


def test_tool_names_equal_by_name_or_group() -> None:
    """Same name, or names in one equivalence group of the config."""
    assert tool_names_equal("search_flights", "search_flights", AGENT)
    assert tool_names_equal("find_flights", "search_flights", AGENT)
    assert not tool_names_equal("search_flights", "book_flight", AGENT)


def test_single_equal_call() -> None:
    """One call each, same tool, normalised-equal arguments: equal, not exact."""
    result = match_calls(
        [call("search_flights", origin="JFK", destination="LAX")],
        [call("search_flights", origin="jfk", destination="LAX")],
        TOOLS,
        AGENT,
    )
    assert result.equal and not result.exact and result.score == 1.0
    assert result.missing == [] and result.extra == []


def test_equivalent_tool_names_pair_and_compare_arguments() -> None:
    """An equivalent tool is the same tool; its arguments are still compared."""
    result = match_calls(
        [call("search_flights", origin="JFK", destination="LAX")],
        [call("find_flights", origin="JFK", destination="SFO")],
        TOOLS,
        AGENT,
    )
    pair = result.pairs[0]
    assert pair.same_tool and pair.arguments is not None
    assert pair.arguments.mismatches == [Mismatch("destination", "value", "LAX", "SFO")]
    assert result.score == 1 / 2


def test_wrong_tool_pairs_without_argument_verdict() -> None:
    """A different tool is paired (a wrong-tool answer), scores 0 and has no arguments."""
    result = match_calls(
        [call("search_flights", origin="JFK", destination="LAX")],
        [call("book_flight", flight="AA1")],
        TOOLS,
        AGENT,
    )
    assert [(p.golden, p.candidate, p.same_tool, p.arguments) for p in result.pairs] == [
        (0, 0, False, None)
    ]
    assert not result.equal and result.score == 0.0


def test_parallel_calls_match_as_a_set() -> None:
    """The same calls in another order are equal; pairs follow the arguments, not positions."""
    golden = [
        call("search_flights", origin="JFK", destination="LAX"),
        call("search_flights", origin="BOS", destination="SEA"),
    ]
    candidate = golden[::-1]
    result = match_calls(golden, candidate, TOOLS, AGENT)
    assert result.exact and result.equal
    assert [(p.golden, p.candidate) for p in result.pairs] == [(0, 1), (1, 0)]


def test_missing_and_extra_calls() -> None:
    """Unpaired golden calls are missing, unpaired candidate calls extra; score over the max."""
    golden = [
        call("search_flights", origin="JFK", destination="LAX"),
        call("search_flights", origin="BOS", destination="SEA"),
    ]
    fewer = match_calls(golden, [golden[1]], TOOLS, AGENT)
    assert fewer.missing == [0] and fewer.extra == [] and fewer.score == 1 / 2
    assert [(p.golden, p.candidate) for p in fewer.pairs] == [(1, 0)]
    more = match_calls(golden[:1], [golden[1], golden[0]], TOOLS, AGENT)
    assert more.extra == [0] and more.missing == [] and not more.equal and more.score == 1 / 2


def test_optimal_assignment_where_greedy_is_wrong() -> None:
    """Greedy pairing (each golden takes its best remaining call) loses; the optimum wins.

    g0 scores 2/4 with c0 and 1/4 with c1; g1 scores 2/4 with c0 and 0 with c1. Greedy gives
    g0→c0, g1→c1 (total 2/4); the optimum g0→c1, g1→c0 totals 3/4.
    """
    golden = [call("f", p=1, q=1, r=1, s=1), call("f", p=2, q=2, r=2, s=2)]
    candidate = [call("f", p=1, q=1, r=2, s=2), call("f", p=1, q=9, r=9, s=9)]
    result = match_calls(golden, candidate, {}, AgentConfig())
    assert [(p.golden, p.candidate) for p in result.pairs] == [(0, 1), (1, 0)]
    assert result.score == pytest.approx((1 / 4 + 2 / 4) / 2)
    greedy_total = 2 / 4 + 0.0  # what greedy would have reached, for contrast
    assert result.score * 2 > greedy_total


def test_answer_keys_where_bfcl_greedy_fails() -> None:
    """g0 accepts both calls, g1 only the first: BFCL's greedy pass gives g0 the first and then
    finds nothing for g1; the optimal pairing accepts the answer."""
    key = [
        CallKey(
            name="get_population",
            arguments={"city": ArgumentKey(values=["New York City", "Los Angeles"])},
        ),
        CallKey(name="get_population", arguments={"city": ArgumentKey(values=["New York City"])}),
    ]
    golden = [call("get_population", city="New York City")] * 2
    candidate = [
        call("get_population", city="New York City"),
        call("get_population", city="Los Angeles"),
    ]
    result = match_calls(golden, candidate, {}, AgentConfig(), answer_key=key)
    assert result.equal
    assert [(p.golden, p.candidate) for p in result.pairs] == [(0, 1), (1, 0)]


def test_answer_key_replaces_the_recorded_arguments() -> None:
    """With a key, production's recorded arguments are not the reference: the key is."""
    golden = [call("search_flights", origin="JFK", destination="LAX")]
    key = [
        CallKey(
            name="search_flights",
            arguments={
                "origin": ArgumentKey(values=["JFK", "New York"]),
                "destination": ArgumentKey(values=["LAX"]),
                "date": ArgumentKey(values=["2024-05-01"], optional=True),
            },
        )
    ]
    candidate = [call("search_flights", origin="new york", destination="LAX", date="2024-05-01")]
    assert match_calls(golden, candidate, TOOLS, AGENT, answer_key=key).equal
    assert not match_calls(golden, candidate, TOOLS, AGENT).equal


def test_prose_is_judged_against_recorded_calls_only() -> None:
    """A prose value is handed to the judge when production recorded it, but a key's listed
    values are acceptable as they are."""
    text = "please book the earliest flight you can find"
    golden = [call("search_flights", origin="JFK", destination=text)]
    recorded = match_calls(golden, golden, TOOLS, AGENT)
    assert recorded.pairs[0].arguments.free_text == [("destination", text, text)]
    key = [
        CallKey(
            name="search_flights",
            arguments={
                "origin": ArgumentKey(values=["JFK"]),
                "destination": ArgumentKey(values=[text]),
            },
        )
    ]
    keyed = match_calls(golden, golden, TOOLS, AGENT, answer_key=key)
    assert keyed.exact and keyed.pairs[0].arguments.free_text == []


def test_unparseable_candidate_is_a_mismatch() -> None:
    """Arguments that were not valid JSON give an unparseable mismatch, not an exception."""
    broken = ToolCall.from_raw("search_flights", '{"origin": "JFK",')
    assert broken.arguments is None and broken.arguments_raw is not None
    result = match_calls(
        [call("search_flights", origin="JFK", destination="LAX")], [broken], TOOLS, AGENT
    )
    arguments = result.pairs[0].arguments
    assert arguments is not None
    assert [(m.path, m.kind) for m in arguments.mismatches] == [("", "unparseable")]
    assert not result.equal and result.score == 0.0


def test_call_without_arguments_is_an_empty_object() -> None:
    """No arguments recorded (and none unparseable) compares as {}."""
    assert call_arguments(ToolCall(name="ping")) == {}
    assert match_calls([ToolCall(name="ping")], [call("ping")], {}, AgentConfig()).exact


def test_no_calls_on_either_side() -> None:
    """Two empty answers agree."""
    result = match_calls([], [], TOOLS, AGENT)
    assert result.exact and result.equal and result.score == 1.0


def test_rules_come_from_the_golden_tool() -> None:
    """Schema rules apply: the required origin is named when the candidate leaves it out."""
    result = match_calls(
        [call("search_flights", origin="JFK", destination="LAX")],
        [call("search_flights", destination="LAX")],
        TOOLS,
        AGENT,
    )
    arguments = result.pairs[0].arguments
    assert arguments is not None
    assert arguments.mismatches == [Mismatch("origin", "missing", "JFK", None, required=True)]


def _brute_total(weights: list[list[float]]) -> float:
    """The best total of any one-to-one pairing, by trying them all."""
    rows, cols = len(weights), len(weights[0])
    if rows <= cols:
        return max(
            sum(weights[i][j] for i, j in enumerate(p))
            for p in itertools.permutations(range(cols), rows)
        )
    return max(
        sum(weights[i][j] for j, i in enumerate(p))
        for p in itertools.permutations(range(rows), cols)
    )


@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (3, 4), (4, 3), (4, 4), (2, 6), (7, 7), (8, 6)])
def test_assignment_is_optimal(shape: tuple[int, int]) -> None:
    """Both solvers reach the brute-force optimum on seeded random weights, ties included."""
    rng = random.Random(hash(shape) & 0xFFFF)
    top = 1.0
    for _ in range(30):
        rows, cols = shape
        # Coarse weights with many tops and ties, as argument scores are.
        weights = [
            [rng.choice((0.0, 0.25, 0.5, 0.75, top)) for _ in range(cols)] for _ in range(rows)
        ]
        best = _brute_total(weights) if max(shape) <= 7 else None
        for pairs in (
            best_assignment(weights),
            lazy_best_assignment(rows, cols, lambda i, j, _, w=weights: w[i][j], top),
        ):
            assert len(pairs) == min(rows, cols)
            assert len({i for i, _ in pairs}) == len({j for _, j in pairs}) == len(pairs)
            total = sum(weights[i][j] for i, j in pairs)
            if best is not None:
                assert total == pytest.approx(best)
        lazy = lazy_best_assignment(rows, cols, lambda i, j, _, w=weights: w[i][j], top)
        exact = best_assignment(weights)
        assert sum(weights[i][j] for i, j in lazy) == pytest.approx(
            sum(weights[i][j] for i, j in exact)
        )
        # With cheap upper bounds (exact at the top, loose below it) the optimum is the same.
        bounded = lazy_best_assignment(
            rows,
            cols,
            lambda i, j, bound, w=weights: (
                w[i][j] if not bound or w[i][j] >= top else (w[i][j] + top) / 2
            ),
            top,
        )
        assert sum(weights[i][j] for i, j in bounded) == pytest.approx(
            sum(weights[i][j] for i, j in exact)
        )


def test_lazy_assignment_computes_few_weights_for_reordered_calls() -> None:
    """Equal calls in another order are paired without computing the whole matrix."""
    order = [2, 0, 3, 1]
    seen: list[tuple[int, int, bool]] = []

    def weight(i: int, j: int, bound: bool) -> float:
        seen.append((i, j, bound))
        return 1.0 if order[j] == i else 0.5

    pairs = lazy_best_assignment(4, 4, weight, 1.0)
    assert pairs == [(0, 1), (1, 3), (2, 0), (3, 2)]
    assert len(seen) == len(set(seen)) < 16


def test_a_key_met_again_takes_the_names_of_the_golden_calls_it_comes_with() -> None:
    """The golden side is memoised per answer key, but the calls' names are the golden's: the
    same key with another list of golden calls (here the tools of its two calls swapped) pairs
    by the new names, not by those of the first list."""
    key = [
        CallKey(name="f", arguments={"q": ArgumentKey(values=["x"])}),
        CallKey(name="g", arguments={"q": ArgumentKey(values=["y"])}),
    ]
    candidate = [call("g", q="x"), call("f", q="y")]
    first = match_calls(
        [call("f", q="x"), call("g", q="y")], candidate, {}, AgentConfig(), answer_key=key
    )
    assert not first.equal
    swapped = [call("g", q="x"), call("f", q="y")]
    again = match_calls(swapped, candidate, {}, AgentConfig(), answer_key=key)
    assert again.equal
    assert [(p.golden, p.candidate) for p in again.pairs] == [(0, 0), (1, 1)]
