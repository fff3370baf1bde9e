"""Session/step exports: the shipped example becomes sessions of llm, tool and other steps."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_backtest.errors import InputError
from agent_backtest.formats import cassette, chat_log, session_steps
from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.trace import Message, Session, Step, ToolCall

EXAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "session_steps" / "example.json"


def read(path: Path = EXAMPLE, strict: bool = False) -> tuple[list[Session], SkipLog]:
    """All sessions of a session/step document and the skip log."""
    skips = SkipLog(str(path), strict=strict)
    return list(session_steps.read(path, ReadOptions(strict=strict), skips)), skips


def steps_by_id() -> dict[str, Step]:
    """Every step of the example, by step id."""
    return {step.id: step for session in read()[0] for step in session.steps()}


def test_example_sessions_turns_and_agent() -> None:
    sessions, _ = read()
    assert [session.id for session in sessions] == ["sess-7f3a", "sess-b210"]
    first = sessions[0]
    assert first.agent is not None
    assert (first.agent.name, first.agent.version) == ("acme-support", "2025.03.1")
    assert first.source is not None and first.source.location == "$[0]"
    assert [turn.topic for turn in first.turns] == ["order_status", "billing"]
    assert first.turns[0].user_input == (
        "Where is my order A1234? It was supposed to arrive Monday."
    )
    assert first.turns[1].agent_output is not None
    assert first.turns[1].agent_output.startswith("I've refunded the $4.99 shipping fee")


def test_steps_by_kind_and_the_malformed_step_is_skipped() -> None:
    sessions, skips = read()
    kinds = [
        [(step.kind, step.name) for step in turn.steps]
        for session in sessions
        for turn in session.turns
    ]
    assert kinds == [
        [
            ("llm", "router"),
            ("llm", "order_status_agent"),
            ("tool", "lookup_order"),
            ("llm", "order_status_agent"),
        ],
        [("llm", "router"), ("llm", "billing_agent"), ("tool", "issue_refund")],
        [
            ("other", "input_guardrail"),
            ("llm", "router"),
            ("llm", "billing_agent"),
            ("tool", "cancel_subscription"),
        ],
    ]
    assert dict(skips.counts) == {"malformed_step_input": 1}
    assert skips.examples[0].location == "$[0].turns[1].steps[2]"
    assert "not valid JSON" in skips.examples[0].detail


def test_llm_steps_carry_tool_definitions_model_and_params() -> None:
    steps = steps_by_id()
    router = steps["s1-router-1"].llm
    assert router is not None and router.request.tools is not None
    assert [tool.name for tool in router.request.tools] == [
        "go_to_order_status",
        "go_to_billing",
        "end_session",
    ]
    assert router.request.model == "gpt-4.1-mini"
    assert router.request.params == {"temperature": 0}
    billing = steps["s1-billing-1"].llm
    assert billing is not None and billing.request.tools is not None
    refund = billing.request.tools[0]
    assert refund.name == "issue_refund"
    assert refund.parameters is not None and refund.parameters["required"] == ["order_id", "amount"]


def test_answers_with_parsed_and_raw_arguments() -> None:
    steps = steps_by_id()
    lookup = steps["s1-order-1"].llm
    assert lookup is not None and lookup.response is not None
    assert lookup.response.message.tool_calls == [
        ToolCall(id="call_lk1", name="lookup_order", arguments={"order_id": "A1234"})
    ]
    assert lookup.response.finish_reason == "tool_calls"
    assert lookup.response.model == "gpt-4.1-mini-2025-04-14"
    assert lookup.response.usage is not None
    assert (lookup.response.usage.input_tokens, lookup.response.usage.output_tokens) == (148, 19)
    billing = steps["s1-billing-1"].llm
    assert billing is not None and billing.response is not None
    (broken,) = billing.response.message.tool_calls or []
    assert broken.name == "issue_refund" and broken.arguments is None
    assert broken.arguments_raw == '{"order_id": "A1234", "amount": 4.99'
    assert broken.arguments_error is not None and broken.arguments_error.startswith("invalid JSON")


def test_input_messages_with_tool_invocations_and_an_output_object() -> None:
    answer = steps_by_id()["s1-order-2"].llm
    assert answer is not None and answer.response is not None
    messages = answer.request.messages
    assert [message.role for message in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2] == Message(
        role="assistant",
        tool_calls=[ToolCall(id="call_lk1", name="lookup_order", arguments={"order_id": "A1234"})],
    )
    assert messages[3].tool_call_id == "call_lk1"
    assert json.loads(messages[3].text())["carrier"] == "UPS"
    # This step's output is a JSON object rather than a JSON string: both are read.
    assert answer.response.message.text().startswith("Your order A1234 shipped with UPS")
    assert answer.response.finish_reason == "stop"


def test_action_steps_become_tool_executions() -> None:
    step = steps_by_id()["s1-lookup-1"]
    assert step.tool is not None
    assert step.tool.name == "lookup_order"  # "orders.lookup_order" without its namespace
    assert step.tool.arguments == {"order_id": "A1234"}
    assert step.tool.result["status"] == "shipped"
    assert step.attributes["node"] == "order_status_agent"
    other = steps_by_id()["s2-guard-1"]
    assert other.attributes["step_type"] == "GUARDRAIL_STEP"
    assert other.attributes["input"] == "Please cancel my Acme+ subscription."


def test_times_and_status() -> None:
    step = steps_by_id()["s1-router-1"]
    assert step.started_at == datetime(2025, 3, 5, 14, 2, 11, 120000, tzinfo=UTC)
    assert step.ended_at == datetime(2025, 3, 5, 14, 2, 11, 870000, tzinfo=UTC)
    assert step.status == "ok"
    assert step.attributes["status"] == "SUCCESS"


def test_failed_action_and_malformed_session(tmp_path: Path) -> None:
    document = json.loads(EXAMPLE.read_text())
    cancel = document[1]["turns"][0]["steps"][3]
    cancel.update(status="FAILED", output="subscription service unavailable")
    document.insert(0, {"turns": []})
    path = tmp_path / "steps.json"
    path.write_text(json.dumps({"sessions": document}))
    sessions, skips = read(path)
    assert [session.id for session in sessions] == ["sess-7f3a", "sess-b210"]
    assert skips.counts["malformed_session"] == 1
    assert skips.examples[0].location == "$.sessions[0]"
    assert any(skip.location == "$.sessions[1].turns[1].steps[2]" for skip in skips.examples)
    failed = sessions[1].steps()[-1]
    assert failed.status == "error" and failed.tool is not None
    assert failed.tool.result == "subscription service unavailable"
    assert failed.tool.error == "status FAILED"


def test_missing_output_is_no_response(tmp_path: Path) -> None:
    document = json.loads(EXAMPLE.read_text())
    del document[1]["turns"][0]["steps"][1]["output"]
    path = tmp_path / "steps.json"
    path.write_text(json.dumps(document))
    _, skips = read(path)
    assert skips.counts["no_response"] == 1
    assert any(
        skip.reason == "no_response" and skip.location == "$[1].turns[0].steps[1]"
        for skip in skips.examples
    )


def test_strict_turns_the_skip_into_an_input_error() -> None:
    with pytest.raises(InputError) as caught:
        read(strict=True)
    assert caught.value.location == "$[0].turns[1].steps[2]"
    assert "malformed_step_input" in str(caught.value)


def test_unreadable_documents_are_input_errors(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"session_id": "x",\n   "turns": [}\n]\n')
    with pytest.raises(InputError) as caught:
        read(broken)
    assert caught.value.location is not None and caught.value.location.startswith("line 3")
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"data": []}')
    with pytest.raises(InputError) as caught:
        read(wrong)
    assert caught.value.location == "$"


def test_sniff() -> None:
    head = EXAMPLE.read_text()[:65536]
    assert session_steps.sniff(head, EXAMPLE)
    assert not chat_log.sniff(head, EXAMPLE)
    assert not cassette.sniff(head, EXAMPLE)
