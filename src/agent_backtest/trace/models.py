"""The canonical trace model: what an agent did, in one shape for every input format.

Session → Turn → Step. An LLM step holds the request exactly as it was sent and the answer that
came back; a tool step holds one tool execution. Values that were not recorded stay ``None``:
a missing time, token count or status is never turned into zero.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_backtest.trace.arguments import parse_arguments

SESSION_SCHEMA = "abt.session/1"

Role = Literal["system", "developer", "user", "assistant", "tool"]
StepKind = Literal["llm", "tool", "agent", "other"]
StepStatus = Literal["ok", "error"]


class Record(BaseModel):
    """Base of every model: unknown fields are refused so a typo in a file is an error."""

    model_config = ConfigDict(extra="forbid", validate_assignment=False)


class ContentPart(BaseModel):
    """One typed piece of a message's content (text, image, audio, refusal, …)."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(description="Part type as the source named it, e.g. 'text' or 'image_url'.")
    text: str | None = Field(default=None, description="The text of a text-like part.")


class ToolCall(Record):
    """A call of one tool requested by the model."""

    id: str | None = Field(default=None, description="Call id used to pair the tool's result.")
    name: str = Field(description="Name of the tool the model asked for.")
    arguments: Any = Field(
        default=None,
        description="Arguments parsed from JSON; None when the raw string was not valid JSON.",
    )
    arguments_raw: str | None = Field(
        default=None, description="The raw argument string, kept only when it is not valid JSON."
    )
    arguments_error: str | None = Field(
        default=None, description="Why the raw argument string could not be parsed."
    )

    @classmethod
    def from_raw(cls, name: str, arguments: Any, call_id: str | None = None) -> ToolCall:
        """A call whose arguments may be a JSON string, an object, or absent."""
        value, raw, error = parse_arguments(arguments)
        return cls(id=call_id, name=name, arguments=value, arguments_raw=raw, arguments_error=error)


class Message(Record):
    """One chat message, named as in OpenAI chat completions."""

    role: Role = Field(description="Who speaks: system, developer, user, assistant or tool.")
    content: str | list[ContentPart] | None = Field(
        default=None, description="Plain text, typed parts, or None (assistant tool calls only)."
    )
    tool_calls: list[ToolCall] | None = Field(
        default=None, description="Tool calls an assistant message requests."
    )
    tool_call_id: str | None = Field(
        default=None, description="For role=tool: the id of the call this message answers."
    )
    name: str | None = Field(default=None, description="Participant or tool name, if recorded.")

    def text(self) -> str:
        """The message's text, with typed text parts joined by newlines."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(part.text for part in self.content if part.text is not None)


class ToolDef(Record):
    """A tool offered to the model (OpenAI function form, flattened)."""

    name: str = Field(description="Function name.")
    description: str | None = Field(default=None, description="What the tool does.")
    parameters: dict[str, Any] | None = Field(
        default=None, description="JSON Schema of the arguments."
    )
    strict: bool | None = Field(default=None, description="OpenAI strict-schema flag, if set.")


class LLMRequest(Record):
    """The request exactly as production sent it."""

    model: str | None = Field(default=None, description="Model name the request asked for.")
    messages: list[Message] = Field(description="The conversation the model saw, in order.")
    tools: list[ToolDef] | None = Field(
        default=None,
        description="Tools offered; None when the trace did not record them, [] when none.",
    )
    tool_choice: Any = Field(default=None, description="tool_choice as sent, if any.")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="Other sampling and output parameters as sent (temperature, max_tokens, …).",
    )


class Usage(Record):
    """Token counts reported for one call; a count not reported stays None."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cached_input_tokens: int | None = Field(
        default=None, description="Input tokens served from the provider's prompt cache."
    )
    reasoning_tokens: int | None = Field(
        default=None, description="Output tokens spent on reasoning (thinking), if reported."
    )


def add_usage(
    totals: tuple[int | None, int | None], usage: Usage | None
) -> tuple[int | None, int | None]:
    """Running (input, output) token totals with one more call's ``usage`` added: a count no
    call reported stays None, never 0."""
    if usage is None:
        return totals
    spent_in, spent_out = totals
    if usage.input_tokens is not None:
        spent_in = (spent_in or 0) + usage.input_tokens
    if usage.output_tokens is not None:
        spent_out = (spent_out or 0) + usage.output_tokens
    return spent_in, spent_out


class LLMResponse(Record):
    """The answer that came back."""

    message: Message = Field(description="The assistant message (text and/or tool calls).")
    finish_reason: str | None = Field(default=None, description="Why generation stopped.")
    usage: Usage | None = Field(default=None, description="Token counts, if recorded.")
    model: str | None = Field(default=None, description="Model that answered, if recorded.")
    id: str | None = Field(default=None, description="Provider's response id, if recorded.")


class Unusable(Record):
    """Why a recorded call cannot be replayed: a named reason and what is missing."""

    reason: str = Field(description="A named reason, such as input_is_flat_string.")
    detail: str = Field(description="What the trace holds instead, and what is missing.")


class LLMCall(Record):
    """One model round trip."""

    request: LLMRequest
    response: LLMResponse | None = Field(
        default=None, description="None when the trace has the request but no answer."
    )
    provider: str | None = Field(default=None, description="Provider or system, if recorded.")
    reconstructed: bool = Field(
        default=False,
        description="True when the request was not recorded as sent but rebuilt: from earlier "
        "steps of the same conversation (history kept server-side), or from an agent's event "
        "log.",
    )
    tools_supplied: bool = Field(
        default=False,
        description="True when the trace lacked tool definitions and --tools supplied them.",
    )
    notes: list[str] = Field(
        default_factory=list, description="How the reader filled in anything not recorded as is."
    )
    dialect: str | None = Field(
        default=None, description="The attribute dialect or payload shape the call was read from."
    )
    unusable: Unusable | None = Field(
        default=None,
        description="Set when the reader found what keeps the call from being replayed.",
    )
    filled_from: dict[str, str] = Field(
        default_factory=dict,
        description="Parts of the call (answer, tools, usage, …) that the dialect named in "
        "`dialect` lacked, each with the other dialect whose reading of the same record gave it.",
    )


class ToolExecution(Record):
    """One execution of a tool by the agent."""

    name: str
    call_id: str | None = None
    arguments: Any = None
    arguments_raw: str | None = None
    arguments_error: str | None = None
    result: Any = Field(default=None, description="What the tool returned, if recorded.")
    error: str | None = Field(default=None, description="The tool's error, if it failed.")

    @classmethod
    def from_raw(cls, name: str, arguments: Any, **fields: Any) -> ToolExecution:
        """An execution whose recorded arguments may be a JSON string, an object, or absent;
        ``fields`` are its other fields as recorded (``call_id``, ``result``, ``error``)."""
        value, raw, error = parse_arguments(arguments)
        return cls(name=name, arguments=value, arguments_raw=raw, arguments_error=error, **fields)


class Step(Record):
    """One thing the agent did inside a turn."""

    id: str = Field(description="Step id, unique within the session (span id, index, …).")
    trace_id: str | None = Field(
        default=None,
        description="The OpenTelemetry trace id of the span the step was read from (its id is "
        "then the span id); None for steps not read from spans.",
    )
    kind: StepKind
    name: str | None = Field(default=None, description="Node (for llm/agent) or tool name.")
    parent_id: str | None = None
    started_at: datetime | None = Field(default=None, description="UTC start; None if missing.")
    ended_at: datetime | None = Field(default=None, description="UTC end; None if missing.")
    status: StepStatus | None = Field(default=None, description="None when not recorded.")
    error: str | None = Field(default=None, description="Error message when status is error.")
    agent_version: str | None = Field(
        default=None,
        description="The version of the agent that ran this step, as the trace recorded it; "
        "kept per step because a session can span a deploy. None when not recorded.",
    )
    llm: LLMCall | None = None
    tool: ToolExecution | None = None
    attributes: dict[str, Any] = Field(
        default_factory=dict, description="Source attributes kept for reference."
    )


class Turn(Record):
    """One user input and everything the agent did about it."""

    index: int
    user_input: str | None = None
    agent_output: str | None = None
    topic: str | None = None
    steps: list[Step] = Field(default_factory=list)


class SourceRef(Record):
    """Where a session was read from."""

    file: str
    format: str
    location: str | None = Field(default=None, description="Line, span or JSON path in the file.")


class AgentInfo(Record):
    """The agent that produced a session, as far as the trace says."""

    name: str | None = None
    version: str | None = Field(
        default=None,
        description="The agent version of the whole session: set only when every step records "
        "the same one (see Step.agent_version).",
    )


class Session(Record):
    """One conversation of an agent with a user: the unit the canonical JSONL stores per line."""

    schema_: Literal["abt.session/1"] = Field(default=SESSION_SCHEMA, alias="schema")
    id: str
    source: SourceRef | None = None
    agent: AgentInfo | None = None
    turns: list[Turn] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def steps(self) -> list[Step]:
        """Every step of every turn, in order."""
        return [step for turn in self.turns for step in turn.steps]


def common_agent_version(steps: Iterable[Step]) -> str | None:
    """The agent version of a session: the one every step records, else None.

    A step without a version, or two steps with different ones (a session across a deploy),
    leaves the session without one; its steps keep theirs.
    """
    versions = {step.agent_version for step in steps}
    if len(versions) != 1:
        return None
    return versions.pop()
