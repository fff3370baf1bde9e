"""Simulate runs judged by ``abt simulate judge`` against a scripted judge on 127.0.0.1, each flow
with the outcome a test chooses: the records as the run and judging code write them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.simulate.models import ConversationRecord, Flow, ToolActivity
from agent_backtest.trace import dump_record
from tests.fake_openai import FakeOpenAI
from tests.simulate.judge_runs import (
    FAIL,
    PASS,
    conversation,
    flow_of,
    note_flow,
    replies,
    turn,
    write_config,
    write_run,
)

runner = CliRunner()
OTHER_FAIL = {
    **FAIL,
    "owner": "agent_execution",
    "failure_category": "wrong_arguments",
    "evidence": "Turn 1 saved the note under the wrong title.",
}
# What the scripted judge answers for each outcome it is asked about.
ANSWERS: dict[str, Any] = {
    "pass": PASS,
    "fail": FAIL,
    "fail_execution": OTHER_FAIL,
    "invalid": "this is not a verdict",
}


@dataclass(frozen=True)
class Planned:
    """A flow of a test run and what happens to it."""

    flow_id: str
    family: str
    seed: str | None
    outcome: str
    """pass, fail, fail_execution, invalid (the judge never answers validly), transport (the
    conversation was not completed), not_played (no conversation) or unjudged (played after the
    judging)."""
    user: str = "Save a note called groceries."
    result_length: int | None = None
    """The full length of the add_note result, when the recording cut it."""


def flow_of_plan(plan: Planned) -> Flow:
    """The flow of a planned outcome."""
    flow = note_flow(plan.flow_id)
    turns = [flow.turns[0].model_copy(update={"user": plan.user})]  # type: ignore[index]
    return flow.model_copy(update={"family": plan.family, "seed_id": plan.seed, "turns": turns})


def conversation_of_plan(plan: Planned) -> ConversationRecord:
    """The recorded conversation of a planned outcome (played flows only)."""
    if plan.outcome == "transport":
        record = conversation(plan.flow_id, [], transport_error="connection reset by peer")
    else:
        call = ToolActivity(
            name="add_note",
            arguments={"title": "groceries"},
            result="ok",
            result_length=plan.result_length or 2,
        )
        recorded = turn(user=plan.user, calls=[call])
        timed = recorded.model_copy(update={"ttft_ms": 120.0, "turn_ms": 812.0})
        record = conversation(plan.flow_id, [timed])
    return record.model_copy(update={"family": plan.family, "seed_id": plan.seed})


def judged_run(tmp_path: Path, name: str, plans: list[Planned]) -> Path:
    """A run of these flows, judged by ``abt simulate judge`` (the scripted judge answering each
    flow as planned), then the ``unjudged`` conversations appended as a resumed run would."""
    outcomes = {plan.flow_id: plan.outcome for plan in plans}
    played = [p for p in plans if p.outcome not in ("not_played", "unjudged")]
    run = write_run(
        tmp_path / name, [flow_of_plan(p) for p in plans], [conversation_of_plan(p) for p in played]
    )
    with FakeOpenAI(reply=replies(lambda body: ANSWERS[outcomes[flow_of(body)]])) as judge:
        config = write_config(tmp_path, ("main", judge.base_url))
        result = runner.invoke(
            app,
            ["simulate", "judge", str(run), "--judge", "main/grader", "--config", str(config)],
        )
    assert result.exit_code == 0, result.output
    late = [conversation_of_plan(p) for p in plans if p.outcome == "unjudged"]
    with (run / "conversations.jsonl").open("ab") as handle:
        handle.write(b"".join(dump_record(record) + b"\n" for record in late))
    return run
