"""Every figure of a hand-built session whose times, overlaps and gaps are worked out by hand.

The session (see ``traces.worked_session``), in ms from its start:

    turn 0  l1 llm m1 [0,100] asks search+lookup   t1 search [110,300]   t2 lookup [150,200]
            l2 llm m1 [320,400]   t3 search [410,—] timeout   t4 search [500,600] ValueError
            l3 llm m2 [650,700] no usage
    turn 1  l4 llm m2 [1000,1100] no status, no output count   t5 calc [1150,1160] no arguments
"""

from __future__ import annotations

import gc
import weakref

import pytest

from agent_backtest.profiling import Profiler
from agent_backtest.profiling.tokens import Price, PriceTable
from agent_backtest.runs.profile import ProfileGroup

from .traces import llm, session, tool, worked_session


@pytest.fixture(scope="module")
def figures() -> ProfileGroup:
    profiler = Profiler(
        "agent",
        prices=PriceTable(prices={"m1": Price(input_per_million=2.0, output_per_million=10.0)}),
    )
    profiler.add(worked_session(), "f.jsonl", "canonical")
    return profiler.result([]).groups["helper@1"]


def test_llm_service_time_nearest_rank(figures: ProfileGroup) -> None:
    llm_time = figures.time.llm_service_ms
    # durations 100, 80, 50, 100 → sorted 50, 80, 100, 100: p50 = 2nd, p95 = 4th (⌈3.8⌉)
    assert llm_time.all.model_dump() == {
        "count": 4,
        "missing": 0,
        "total": 330.0,
        "observed_total": 330.0,
        "p50": 80.0,
        "p95": 100.0,
        "max": 100.0,
        "available": True,
        "reason": None,
    }
    assert llm_time.by_model["m1"].p50 == 80.0
    assert llm_time.by_model["m1"].p95 == 100.0
    assert llm_time.by_model["m2"].total == 150.0


def test_tool_time_total_is_null_when_an_end_is_missing(figures: ProfileGroup) -> None:
    tool_time = figures.time.tool_service_ms
    # 190, 50, —, 100, 10
    assert tool_time.all.model_dump() == {
        "count": 4,
        "missing": 1,
        "total": None,
        "observed_total": 350.0,
        "p50": 50.0,
        "p95": 190.0,
        "max": 190.0,
        "available": False,
        "reason": "1 of 5 tool calls have no end time",
    }
    search = tool_time.by_tool["search"]
    assert (search.count, search.missing, search.total) == (2, 1, None)
    assert search.observed_total == 290.0
    assert tool_time.by_tool["calc"].total == 10.0


def test_gaps_between_calls(figures: ProfileGroup) -> None:
    gaps = figures.time.gap_ms
    within = gaps.within_turns
    # l1→t1 10, t1→t2 overlapped, t2→l2 20 (from t1's end 300, not t2's 200), l2→t3 10,
    # t3→t4 missing (t3 has no end), t4→l3 50, l4→t5 50
    assert (within.count, within.missing, within.total) == (5, 1, None)
    assert within.observed_total == 140.0
    assert (within.p50, within.p95, within.max) == (20.0, 50.0, 50.0)
    assert (
        within.reason == "1 of 6 transitions between calls within a turn follow a call "
        "with no end time"
    )
    assert gaps.overlapped_transitions == 1
    assert gaps.by_transition["llm_to_tool"].total == 70.0
    assert gaps.by_transition["tool_to_llm"].total == 70.0
    assert gaps.by_transition["tool_to_tool"].missing == 1
    assert gaps.between_turns.total == 300.0  # l3 ends at 700, l4 starts at 1000


def test_session_span_and_its_note(figures: ProfileGroup) -> None:
    span = figures.time.session_span_ms
    assert span.total == 1160.0 and span.available
    assert span.note.startswith("1 sessions have steps without times")


def test_calls_by_status_tool_and_turn(figures: ProfileGroup) -> None:
    calls = figures.calls
    assert calls.llm.total == 4
    assert calls.llm.by_model == {"m1": 2, "m2": 2}
    assert calls.llm.by_status.model_dump() == {"success": 3, "failed": 0, "timeout_or_unknown": 1}
    assert calls.llm.status_note == "1 of 4 LLM calls record no status"
    tool = calls.tool
    assert tool.by_tool == {"calc": 1, "lookup": 1, "search": 3}
    assert tool.by_status.model_dump() == {"success": 2, "failed": 1, "timeout_or_unknown": 2}
    assert tool.by_tool_status["search"].model_dump() == {
        "success": 1,
        "failed": 1,
        "timeout_or_unknown": 1,
    }
    assert calls.per_turn.llm.total == 4 and calls.per_turn.llm.max == 3
    assert (calls.per_turn.tool.p50, calls.per_turn.tool.p95) == (1, 4)
    assert calls.per_session.tool.total == 5


def test_parallel_calls(figures: ProfileGroup) -> None:
    parallel = figures.calls.tool.parallel
    # t1 [110,300] and t2 [150,200] overlap; t3 has no end, so the total is not known
    assert parallel.overlapping_calls.observed_total == 2
    assert parallel.overlapping_calls.total is None
    assert parallel.overlapping_calls.reason == "1 of 5 tool calls have no valid start and end time"
    assert parallel.batches.total is None
    assert parallel.max_in_flight == 2
    assert parallel.requested_together.model_dump() == {"answers": 1, "calls": 2}


def test_retries_and_repeats(figures: ProfileGroup) -> None:
    repeated = figures.calls.tool.repeated
    # search{q:x}, lookup, search{q:x}, search{q:x} (a retry), calc (arguments unknown)
    assert repeated.retries.observed_total == 1 and repeated.retries.total is None
    assert repeated.retries.reason == "1 of 5 tool calls have no recorded arguments"
    assert repeated.repeats.observed_total == 2
    assert repeated.retries_by_tool == {"search": 1}
    assert repeated.repeats_by_tool == {"search": 2}
    assert repeated.longest_run_of_identical_calls == 2
    assert repeated.sessions_with_retries == 1


def test_failures_kinds_and_follow_ups(figures: ProfileGroup) -> None:
    failures = figures.failures
    assert failures.tool_error_kinds == {"search": {"ValueError": 1, "timeout": 1}}
    assert failures.tool_failures_followed_by.model_dump() == {
        "retry_same_tool": 1,
        "other_tool": 0,
        "end_of_turn": 1,
    }
    assert not failures.available
    assert failures.reason.startswith("1 of 5 tool calls record no status")


def test_tokens_and_cost(figures: ProfileGroup) -> None:
    tokens = figures.tokens
    assert tokens.by_model["m1"].input.total == 300
    assert tokens.by_model["m1"].output.total == 30
    m2 = tokens.by_model["m2"]
    assert (m2.input.total, m2.input.observed_total) == (None, 50)
    assert m2.input.reason == "1 of 2 LLM calls report no token usage"
    assert m2.output.missing == 2
    cost = tokens.cost
    assert cost.by_model["m1"].total == pytest.approx(0.0009)
    assert cost.by_model["m2"].reason == "the price table has no price for m2"
    assert cost.total is None and cost.observed_total == pytest.approx(0.0009)
    assert cost.reason == "no price for m2"


def test_cost_is_null_when_tokens_are_missing() -> None:
    profiler = Profiler(
        "agent",
        prices=PriceTable(prices={"m2": Price(input_per_million=1.0, output_per_million=1.0)}),
    )
    profiler.add(session("s", [llm("a", 0, 1, "m2", (1000, None))]), "f", "canonical")
    cost = profiler.result([]).groups["helper@1"].tokens.cost
    assert cost.by_model["m2"].total is None
    assert cost.by_model["m2"].observed_total == 0.001
    assert cost.by_model["m2"].reason == "1 of 1 LLM calls report no count of these tokens"


def test_untimed_session_says_so_and_counts_still_work() -> None:
    profiler = Profiler("agent")
    profiler.add(session("s", [llm("a", None, None), tool("b", "x", None, None, {})]), "f", "c")
    group = profiler.result([]).groups["helper@1"]
    assert group.calls.tool.total == 1
    assert group.time.session_span_ms.reason == "1 of 1 sessions record no step times"
    assert group.time.llm_service_ms.all.total is None
    assert group.time.llm_service_ms.all.reason == "1 of 1 LLM calls have no start or end time"


def test_end_before_start_is_missing_not_negative() -> None:
    profiler = Profiler("agent")
    profiler.add(session("s", [tool("b", "x", 50, 10, {})]), "f", "c")
    tool_time = profiler.result([]).groups["helper@1"].time.tool_service_ms.all
    assert tool_time.count == 0 and tool_time.reason == "1 of 1 tool calls end before they start"


def test_sessions_are_not_kept() -> None:
    profiler = Profiler("agent")
    item = worked_session()
    ref = weakref.ref(item)
    profiler.add(item, "f", "canonical")
    del item
    gc.collect()
    assert ref() is None


def test_groups_by_model_set_and_session() -> None:
    by_model = Profiler("model")
    by_model.add(worked_session(), "f", "c")
    by_model.add(session("other", [llm("a", 0, 1, "m1")]), "f", "c")
    assert sorted(by_model.result([]).groups) == ["m1", "m1+m2"]
    by_session = Profiler("session")
    by_session.add(worked_session(), "f", "c")
    assert list(by_session.result([]).groups) == ["worked"]
    by_agent = Profiler("agent")
    by_agent.add(session("x", [], agent=None), "f", "c")
    assert list(by_agent.result([]).groups) == ["(agent not recorded)"]
