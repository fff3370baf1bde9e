"""The scorer's removed_tool_called_in_golden bucket: production called a tool the patch took
away, which is the patch's doing, not the candidate's failure."""

from __future__ import annotations

import asyncio

from agent_backtest.runs import ResultRecord
from agent_backtest.runs.scores import ScoreRecord
from agent_backtest.scoring.buckets import Scorer
from agent_backtest.trace import LLMResponse, Message
from agent_backtest.units import AgentConfig, Unit
from tests.patch.tau_units import tau_units


def unit_calling(tool: str) -> Unit:
    """A τ-bench unit where production called ``tool``."""
    return next(
        u
        for u in tau_units()
        if u.golden.message.tool_calls and u.golden.message.tool_calls[0].name == tool
    )


def score(unit: Unit, answer: Message, removed: list[str] | None) -> ScoreRecord:
    result = ResultRecord(
        unit_id=unit.unit_id,
        repeat=0,
        session_id=unit.session_id,
        model="openai/candidate",
        request_sha="sha256:x",
        attempts=1,
        response=LLMResponse(message=answer),
        patch_ops=["drop"],
        removed_tools=removed,
    )
    scorer = Scorer(AgentConfig(), judge=None, exact_strings=False, scoring_id="test")
    return asyncio.run(scorer.score(unit, result))


def test_a_text_answer_where_production_called_a_removed_tool() -> None:
    unit = unit_calling("get_reservation_details")
    text = Message(role="assistant", content="Could you give me your reservation id?")
    record = score(unit, text, ["get_reservation_details"])
    assert (record.status, record.bucket) == ("unscored", "removed_tool_called_in_golden")
    assert record.unscored_reason == "production called a tool the patch removed"
    assert record.golden_tool == "get_reservation_details" and record.candidate_tool is None
    assert score(unit, text, None).bucket == "text_instead_of_tool"  # the same answer, unpatched


def test_another_tool_where_production_called_a_removed_tool() -> None:
    unit = unit_calling("get_reservation_details")
    call = (unit.golden.message.tool_calls or [])[0]
    other = Message(role="assistant", tool_calls=[call.model_copy(update={"name": "think"})])
    assert score(unit, other, ["get_reservation_details"]).bucket == "removed_tool_called_in_golden"
    assert score(unit, other, None).bucket == "wrong_tool"


def test_removing_a_tool_production_did_not_call_changes_nothing() -> None:
    unit = unit_calling("get_reservation_details")
    assert score(unit, unit.golden.message, ["cancel_reservation"]).bucket == "match"
