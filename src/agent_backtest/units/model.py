"""The replay unit: one recorded LLM step, its request as sent and production's answer."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from agent_backtest.record_model import TaggedRecord, schema_tag
from agent_backtest.trace import LLMRequest, LLMResponse, SourceRef
from agent_backtest.units.answer_key import ArgumentKey, CallKey

UNIT_SCHEMA = "abt.unit/1"

UnitKind = Literal["router", "action"]
Split = Literal["test", "val"]


class Unit(TaggedRecord):
    """What a candidate model is asked (``request``) and what production answered (``golden``)."""

    schema_: Literal["abt.unit/1"] = schema_tag(UNIT_SCHEMA)
    unit_id: str = Field(description="Stable id: a hash of the session id and the step id.")
    session_id: str
    turn_index: int
    step_id: str
    trace_id: str | None = Field(
        default=None,
        description="The OpenTelemetry trace id of production's span (step_id is then its span "
        "id), when the unit was read from spans.",
    )
    node: str | None = Field(default=None, description="The agent node that made the call.")
    kind: UnitKind = Field(description="router: a routing decision; action: anything else.")
    request: LLMRequest = Field(description="The request exactly as production sent it.")
    golden: LLMResponse = Field(description="Production's answer: what the candidate should do.")
    recorded_model: str | None = Field(
        default=None, description="The model that answered in production, if known."
    )
    provider: str | None = None
    agent_version: str | None = Field(
        default=None, description="The agent version that served the step, as its trace recorded."
    )
    reconstructed: bool = Field(
        default=False,
        description="The request was rebuilt (from server-side history, or from an agent's "
        "event log), not recorded as sent.",
    )
    tools_missing: bool = Field(
        default=False, description="The trace did not record the tools offered to the model."
    )
    tools_supplied: bool = Field(
        default=False, description="The tools came from --tools, not from the trace."
    )
    split: Split | None = Field(default=None, description="test/val label, when a split is set.")
    started_at: datetime | None = None
    ended_at: datetime | None = None
    source: SourceRef | None = None
    notes: list[str] = Field(default_factory=list)
    answer_key: list[CallKey] | None = Field(
        default=None,
        description="Every acceptable form of the golden's tool calls, one key per call in "
        "order (see units/answer_key.py); None: production's own calls are the answer.",
    )

    @model_validator(mode="after")
    def _key_fits_golden(self) -> Unit:
        """An answer key names the golden's calls, one for one."""
        if self.answer_key is not None:
            problem = key_mismatch(self, self.answer_key)
            if problem:
                raise ValueError(problem)
        return self


def key_mismatch(unit: Unit, key: list[CallKey]) -> str | None:
    """Why ``key`` cannot be the answer key of ``unit``'s golden calls, or None if it can.

    A key names the golden's calls one for one, and lists every parameter the tool's schema
    requires: a right call always sends those.
    """
    golden = [call.name for call in unit.golden.message.tool_calls or []]
    named = [call.name for call in key]
    if golden != named:
        return (
            f"the answer key lists calls {named} but production's answer has {golden}: "
            "give one key per golden call, in order"
        )
    tools = {tool.name: tool for tool in unit.request.tools or []}
    for index, call in enumerate(key):
        tool = tools.get(call.name)
        required = (tool.parameters or {}).get("required") if tool is not None else None
        if not isinstance(required, list):
            continue
        left_out = [name for name in required if name not in call.arguments]
        if left_out:
            return (
                f"the answer key of call {index} ({call.name}) leaves out {left_out[0]}, which "
                "the tool requires: list its acceptable values"
            )
        only_omitted = [name for name in required if _only_omission(call.arguments[name])]
        if only_omitted:
            return (
                f"the answer key of call {index} ({call.name}) accepts only leaving out "
                f"{only_omitted[0]}, which the tool requires: list its acceptable values"
            )
    return None


def _only_omission(key: ArgumentKey) -> bool:
    """The key accepts no value at all, only leaving the argument out."""
    return not key.values and key.fields is None and key.items is None


def make_unit_id(session_id: str, step_id: str) -> str:
    """A short stable id, so results of two runs over the same traces pair up."""
    digest = hashlib.sha256(f"{session_id}\x1f{step_id}".encode()).hexdigest()
    return f"u-{digest[:20]}"
