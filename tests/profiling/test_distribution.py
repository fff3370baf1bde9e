"""Nearest-rank percentiles, and totals that are null when any value is missing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent_backtest.profiling import Distribution, Tally, nearest_rank
from agent_backtest.profiling.parallel import overlap
from agent_backtest.profiling.timing import StepTime, transitions


def test_nearest_rank_picks_observed_values() -> None:
    values = [15.0, 20.0, 35.0, 40.0, 50.0]
    assert nearest_rank(values, 0.05) == 15.0
    assert nearest_rank(values, 0.30) == 20.0  # ⌈1.5⌉ = 2nd
    assert nearest_rank(values, 0.40) == 20.0  # ⌈2.0⌉ = 2nd
    assert nearest_rank(values, 0.50) == 35.0  # ⌈2.5⌉ = 3rd
    assert nearest_rank(values, 0.95) == 50.0
    assert nearest_rank(list(range(1, 101)), 0.95) == 95
    assert nearest_rank(list(range(1, 21)), 0.95) == 19  # ⌈19.0⌉ = 19th, not interpolated
    assert nearest_rank([], 0.5) is None


@given(st.lists(st.integers(min_value=0, max_value=10**6), min_size=1))
def test_percentiles_are_values_of_the_data(values: list[int]) -> None:
    distribution = Distribution("calls", integral=True)
    for value in values:
        distribution.add(value)
    figures = distribution.figure()
    assert figures.p50 in values and figures.p95 in values
    assert figures.p50 <= figures.p95 <= figures.max == max(values)
    assert figures.total == sum(values)


def test_missing_value_makes_total_null_with_observed_total_beside() -> None:
    tally = Tally("tool calls")
    tally.add(2.5)
    tally.add(1.5)
    tally.lack("have no end time")
    tally.lack("have no end time")
    tally.lack("have no start time")
    assert tally.figure().model_dump() == {
        "count": 2,
        "missing": 3,
        "total": None,
        "observed_total": 4.0,
        "available": False,
        "reason": "2 of 5 tool calls have no end time; 1 of 5 tool calls have no start time",
    }


def test_empty_distribution_is_unavailable_with_a_reason() -> None:
    figures = Distribution("LLM calls").figure()
    assert figures.available is False and figures.reason == "no LLM calls"
    assert figures.p50 is None and figures.max is None


def test_overlap_touching_chained_and_nested_intervals() -> None:
    assert overlap([(0, 10), (10, 20)]).overlapping == (False, False)  # touching
    chained = overlap([(0, 10), (5, 15), (12, 20), (30, 40)])
    assert chained.overlapping == (True, True, True, False)
    assert chained.batches == 1 and chained.max_in_flight == 2
    nested = overlap([(20, 25), (0, 100), (10, 30), (50, 60), (200, 210), (205, 206)])
    assert nested.overlapping == (True, True, True, True, True, True)
    assert nested.batches == 2 and nested.max_in_flight == 3
    assert overlap([(5, 5)]).max_in_flight == 1
    assert overlap([]).max_in_flight == 0


def test_gap_is_measured_from_the_latest_end_so_far() -> None:
    calls = [
        StepTime("llm", 0, 0, 100),
        StepTime("tool", 0, 110, 500),
        StepTime("tool", 0, 120, 130),
        StepTime("llm", 0, 600, 700),
    ]
    found = [(t.name, t.gap_ms) for t in transitions(calls)]
    # µs → ms: the last gap runs from the first tool's end (500), not the second's (130)
    assert found == [("llm_to_tool", 0.01), ("tool_to_tool", None), ("tool_to_llm", 0.1)]


def test_touching_calls_leave_a_zero_gap_and_missing_times_a_reason() -> None:
    calls = [
        StepTime("llm", 0, 0, 100),
        StepTime("tool", 0, 100, None),
        StepTime("llm", 0, 300, 400),
        StepTime("llm", 1, None, 500),
    ]
    assert [t.gap_ms for t in transitions(calls)] == [
        0.0,
        "follow a call with no end time",
        "lead to a call with no start time",
    ]
    assert [t.between_turns for t in transitions(calls)] == [False, False, True]
