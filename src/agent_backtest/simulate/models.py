"""Flows, recorded conversations and verdicts: the records of a simulate run.

A run directory holds::

    run.json              manifest: target, roles, flows file and sha256, status
    flows.jsonl           the flows selected (and generated), as played
    conversations.jsonl   one ConversationRecord a line, appended as each conversation ends
    sessions.jsonl        the same conversations as canonical sessions (abt units, show, …)
    verdicts.jsonl        one Verdict a line, checkpointed after each judged conversation
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from agent_backtest.record_model import StrictModel, TaggedRecord, schema_tag
from agent_backtest.simulate.state_checks import StateCheck, StateResult
from agent_backtest.trace import LLMRequest, LLMResponse

FLOW_SCHEMA = "abt.flow/1"
CONVERSATION_SCHEMA = "abt.conversation/1"
VERDICT_SCHEMA = "abt.verdict/1"
STOP_MARKER = "###STOP###"
DEFAULT_OWNERS = (
    "agent_routing",
    "agent_execution",
    "agent_rendering",
    "model",
    "backend_data",
    "user_simulator",
    "environment",
    "none",
)

StopReason = Literal[
    "script_end", "user_stop", "max_turns", "agent_error", "transport_error", "deadline"
]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def sanitise_id(raw: str) -> str:
    """A flow id safe in a file name: other characters become ``-``, at most 60 characters."""
    return _UNSAFE.sub("-", raw)[:60]


class ScriptedTurn(StrictModel):
    """One turn of a scripted flow: what the user says, and what a good answer does."""

    user: str = Field(min_length=1)
    expect: str | None = Field(default=None, description="The outcome a good answer reaches.")


class SimulatedUser(StrictModel):
    """A user played by the ``user`` role until it says the stop marker (or max_turns)."""

    instructions: str = Field(min_length=1)
    known_info: str | None = Field(default=None, description="What the user can tell.")
    unknown_info: str | None = Field(default=None, description="What the user does not know.")
    max_turns: int = Field(default=6, ge=1, le=50)


class Flow(StrictModel):
    """One test conversation: scripted turns, or a simulated user with instructions."""

    id: str
    family: str = Field(min_length=1, description="The capability the flow tests.")
    purpose: str = Field(default="", description="What the flow checks, in a sentence.")
    turns: list[ScriptedTurn] | None = None
    user: SimulatedUser | None = None
    expect_tools: list[str] = Field(
        default_factory=list, description="Tools a good conversation calls."
    )
    mutates: bool | None = Field(
        default=None, description="May change the agent's data (None: judged from its tools)."
    )
    seed_id: str | None = Field(
        default=None, description="The seed it came from: ties retries and regenerations."
    )
    teacher_prompt_sha256: str | None = Field(
        default=None, description="Generated flows: the versioned teacher prompt's sha256."
    )
    state: list[StateCheck] = Field(
        default_factory=list,
        description="Checks on the agent's data, made after the conversation (before a restore).",
    )
    repeat_of: str | None = Field(
        default=None, description="A repeat (--k): the id of the flow as written."
    )
    repeat: int | None = Field(
        default=None, ge=1, description="A repeat (--k): which one, from 1; its user's seed."
    )

    @field_validator("id")
    @classmethod
    def _safe_id(cls, value: str) -> str:
        """Ids are sanitised on the way in."""
        safe = sanitise_id(value)
        if not safe:
            raise ValueError("an id needs at least one character")
        return safe

    @model_validator(mode="after")
    def _turns_or_user(self) -> Flow:
        """Exactly one way of speaking: scripted turns or a simulated user."""
        if (self.turns is None) == (self.user is None):
            raise ValueError("give either turns (scripted) or user (simulated), not both")
        if self.turns is not None and not self.turns:
            raise ValueError("turns needs at least one turn")
        return self


class ToolActivity(StrictModel):
    """One tool call the agent made during a turn, with its result as the target reported it."""

    name: str
    call_id: str | None = Field(default=None, description="The call's id, when the agent gave one.")
    arguments: dict | str | None = Field(
        default=None, description="Parsed arguments; the raw string when they were not JSON."
    )
    result: str | None = Field(default=None, description="Truncated to the run's limit.")
    result_length: int | None = Field(default=None, description="The full result's length.")
    error: str | None = None


class ModelCall(StrictModel):
    """One call the built-in agent loop made to its model: the exact request and its answer."""

    request: LLMRequest
    response: LLMResponse | None = Field(default=None, description="None when the call failed.")
    provider: str | None = None
    error: str | None = Field(default=None, description="The call's failure, named.")
    cached: bool = Field(default=False, description="Answered from the response cache.")
    started_at: str | None = Field(default=None, description="UTC, ISO 8601.")
    ms: float | None = Field(default=None, description="The call's time.")


class TurnRecord(StrictModel):
    """What happened in one turn: the user's message and everything the agent did."""

    index: int = Field(ge=1, description="1-based, as the judge's failed_turns count.")
    user: str
    tools_offered: list[str] | None = Field(
        default=None, description="When the target says which tools it offered."
    )
    tool_calls: list[ToolActivity] = Field(default_factory=list)
    final_text: str | None = None
    error: str | None = Field(default=None, description="A transport or agent error, named.")
    started_at: str | None = Field(
        default=None, description="When the user's message was sent (UTC, ISO 8601)."
    )
    ttft_ms: float | None = Field(default=None, description="Time to the first streamed byte.")
    turn_ms: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    model_calls: list[ModelCall] = Field(
        default_factory=list,
        description="The built-in agent loop's model calls, in order (other targets keep "
        "their model's calls to themselves).",
    )
    traceparent: str | None = Field(
        default=None, description="The W3C traceparent header the turn's request carried."
    )


class ConversationRecord(TaggedRecord):
    """One line of ``conversations.jsonl``: one flow played through the target."""

    schema_: Literal["abt.conversation/1"] = schema_tag(CONVERSATION_SCHEMA)
    flow_id: str
    seed_id: str | None = None
    family: str
    target: str = Field(description="The target's name in the target file.")
    turns: list[TurnRecord]
    transport_error: str | None = Field(
        default=None, description="Why the conversation could not be completed: never judged."
    )
    isolated: bool = Field(description="Ran between a fixture snapshot and restore.")
    unisolated_calls: list[str] = Field(
        default_factory=list,
        description="Tools not declared read-only that it called unisolated: the agent's data "
        "may have changed (its verdict is uncertain).",
    )
    started_at: str
    seconds: float
    stop_reason: StopReason | None = Field(
        default=None, description="Why the conversation ended (None: recorded before it was kept)."
    )
    agent_session_id: str | None = Field(
        default=None, description="The session id the agent gave the conversation."
    )
    conversation_id: str | None = Field(
        default=None, description="The id abt gave the conversation (a target header may carry it)."
    )
    user_seed: int | None = Field(default=None, description="The simulated user's seed.")
    state: list[StateResult] = Field(
        default_factory=list, description="The flow's state checks, as found after it."
    )


class Verdict(TaggedRecord):
    """One line of ``verdicts.jsonl``: the decision on one conversation."""

    schema_: Literal["abt.verdict/1"] = schema_tag(VERDICT_SCHEMA)
    flow_id: str
    verdict: Literal["pass", "fail", "uncertain"]
    score: int | None = Field(default=None, ge=0, le=100)
    owner: str | None = Field(default=None, description="Who should fix a failure.")
    judge_reported_owner: str | None = Field(
        default=None, description="The judge's owner where a deterministic check overrode it."
    )
    failure_category: str | None = None
    failed_turns: list[int] = Field(default_factory=list, description="1-based.")
    evidence: str | None = None
    reproduction: list[str] = Field(default_factory=list, description="The user messages.")
    decided_by: Literal["check", "judge", "fallback_judge", "none"] = Field(
        description="check: a deterministic check; none: no verdict could be reached."
    )
    check: str | None = Field(default=None, description="The deterministic check that decided.")
    reason: str | None = Field(
        default=None,
        description="Why uncertain: transport_error, judge_unavailable, judge_invalid, ….",
    )
    rubric_version: str | None = None
    judge_model: str | None = None
