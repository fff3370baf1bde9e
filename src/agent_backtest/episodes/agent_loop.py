"""The agent loop: the agent's model and its tools, until the model answers in text.

One turn of the loop sends the conversation so far (with the tools offered) to the agent's
model; each tool call of its answer runs through the :class:`ToolRunner` and its output is the
next message; then the model is asked again, until it answers without a tool call, a tool call
ends the episode (``runner.done``), the turn's budget of model calls is spent, or a model call
fails. Simulate's built-in ``model`` target runs one turn per user message; a bench episode runs
turns until its user stops, on one budget for the whole episode.

Every model call and every tool execution becomes a trace step the moment it ends (``llm-N``
and ``tool-N-CALL``, N counting the conversation's model calls), handed to ``on_step``, so a
crash loses no finished call and both jobs record the same steps for the same exchange. A call
without an id gets ``call-N-I`` (I from 1, in the answer's order); arguments that are not a JSON
object never reach the tool: the model reads why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from agent_backtest.episodes.calls import CallsLost, ModelCaller, describe_failure
from agent_backtest.errors import bounded
from agent_backtest.redaction import redact
from agent_backtest.trace import (
    LLMCall,
    LLMRequest,
    LLMResponse,
    Message,
    Step,
    ToolCall,
    ToolDef,
    ToolExecution,
    add_usage,
)

AGENT_NODE = "agent"
"""The node name of the agent's model calls in the trace."""

TurnEnding = Literal["answer", "terminal_tool", "step_limit", "error"]


@dataclass(frozen=True)
class ToolResult:
    """What a tool call gave: the text the model reads, and the tool's error when it failed
    (the model then reads ``Error: …``)."""

    output: str
    error: str | None = None


def tool_failed(error: str) -> ToolResult:
    """A failed call: the model reads the error as the tool's answer."""
    error = bounded(error, 500)
    return ToolResult(f"Error: {error}", error)


class ToolRunner(Protocol):
    """The code behind the agent's tools, for one conversation."""

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Run one tool call."""
        ...

    @property
    def done(self) -> bool:
        """Whether a tool call ended the episode (a transfer to a human, say)."""
        ...


@dataclass(frozen=True)
class AgentModel:
    """The agent role's model as the loop asks it."""

    caller: ModelCaller
    model: str
    """The model's name at its provider, as sent."""
    provider: str | None
    params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = 0
    first_tool_call_only: bool = False
    """Run only the first tool call of an answer (the others are dropped from the conversation)."""


@dataclass
class Tokens:
    """Running token totals of some calls: a count no call reported stays None, never 0."""

    input: int | None = None
    output: int | None = None

    def add(self, response: LLMResponse) -> None:
        """Add one call's tokens, when it reports them."""
        self.input, self.output = add_usage((self.input, self.output), response.usage)


@dataclass
class LoopState:
    """The conversation as the agent sees it, and what the loop has done in it so far."""

    messages: list[Message] = field(default_factory=list)
    tools: list[ToolDef] = field(default_factory=list)
    model_calls: int = 0
    tool_calls: int = 0
    """Tool calls that reached the tools (unreadable arguments do not)."""
    tokens: Tokens = field(default_factory=lambda: Tokens())
    """Every call's tokens so far."""


@dataclass
class TurnOutcome:
    """How one turn of the loop ended, and its tokens (missing stays None, never 0)."""

    ending: TurnEnding = "step_limit"
    answer: Message | None = None
    """The model's text answer, when the turn ended with one."""
    error_kind: str | None = None
    """``model_<kind>`` for a classified failure, ``model_error`` for anything else."""
    error_detail: str | None = None
    tokens: Tokens = field(default_factory=Tokens)
    """The turn's calls' tokens."""


StepSink = Callable[[Step], None]


async def run_turn(
    state: LoopState,
    agent: AgentModel,
    tools: ToolRunner,
    max_calls: int,
    on_step: StepSink,
) -> TurnOutcome:
    """Model calls and tool calls until a text answer, at most ``max_calls`` model calls;
    every step handed to ``on_step`` as it ends. Raises only :class:`CallsLost`."""
    outcome = TurnOutcome()
    for _ in range(max_calls):
        answer = await _ask(state, agent, outcome, on_step)
        if answer is None:
            return outcome
        if not answer.tool_calls:
            state.messages.append(Message(role="assistant", content=answer.content))
            outcome.ending, outcome.answer = "answer", answer
            return outcome
        if await _run_calls(state, agent, tools, answer, on_step):
            outcome.ending = "terminal_tool"
            return outcome
    outcome.ending = "step_limit"
    return outcome


async def _ask(
    state: LoopState, agent: AgentModel, outcome: TurnOutcome, on_step: StepSink
) -> Message | None:
    """One model call, recorded; its answer, or None (the outcome says why) when it failed."""
    request = LLMRequest(
        model=agent.model,
        messages=list(state.messages),
        tools=list(state.tools) or None,
        params=dict(agent.params),
    )
    started = datetime.now(UTC)
    try:
        called = await agent.caller.generate(request, agent.model, agent.seed)
    except CallsLost:
        raise
    except Exception as exc:  # a provider failing outside its classified errors (a local
        # model refusing a prompt longer than its context, say): the model's failure
        outcome.ending, outcome.error_kind = "error", "model_error"
        outcome.error_detail = describe_failure(exc)
        return None
    state.model_calls += 1
    error = called.error
    step = Step(
        id=f"llm-{state.model_calls}",
        kind="llm",
        name=AGENT_NODE,
        started_at=started,
        ended_at=datetime.now(UTC),
        status="ok" if error is None and called.response is not None else "error",
        error=redact(error.detail) if error is not None else None,
        llm=LLMCall(request=request, response=called.response, provider=agent.provider),
        attributes={"cached": True} if called.cache_hit else {},
    )
    on_step(step)
    if error is not None or called.response is None:
        outcome.ending = "error"
        outcome.error_kind = f"model_{error.kind}" if error is not None else "model_no_answer"
        outcome.error_detail = step.error or "the model gave no answer"
        return None
    outcome.tokens.add(called.response)
    state.tokens.add(called.response)
    return called.response.message


async def _run_calls(
    state: LoopState, agent: AgentModel, tools: ToolRunner, answer: Message, on_step: StepSink
) -> bool:
    """Run the answer's tool calls (the first only, when so ruled), each output the next
    message; True when a call ended the episode."""
    calls = list(answer.tool_calls or [])
    if agent.first_tool_call_only:
        calls = calls[:1]
    calls = [
        call if call.id else call.model_copy(update={"id": f"call-{state.model_calls}-{n}"})
        for n, call in enumerate(calls, 1)
    ]
    state.messages.append(Message(role="assistant", content=answer.content, tool_calls=calls))
    for call in calls:
        started = datetime.now(UTC)
        result = await _run_one(state, tools, call)
        state.messages.append(Message(role="tool", content=result.output, tool_call_id=call.id))
        on_step(_tool_step(state, call, result, started))
        if tools.done:
            return True
    return False


async def _run_one(state: LoopState, tools: ToolRunner, call: ToolCall) -> ToolResult:
    """The call run; arguments that are not a JSON object never reach the tool."""
    if not isinstance(call.arguments, dict):
        why = call.arguments_error or "they are not a JSON object"
        return tool_failed(f"the arguments of {call.name} cannot be read ({why})")
    state.tool_calls += 1
    return await tools.call(call.name, call.arguments)


def _tool_step(state: LoopState, call: ToolCall, result: ToolResult, started: datetime) -> Step:
    return Step(
        id=f"tool-{state.model_calls}-{call.id}",
        kind="tool",
        name=call.name,
        started_at=started,
        ended_at=datetime.now(UTC),
        status="error" if result.error else "ok",
        error=result.error,
        tool=ToolExecution(
            name=call.name,
            call_id=call.id,
            arguments=call.arguments,
            arguments_raw=call.arguments_raw,
            arguments_error=call.arguments_error,
            result=result.output,
            error=result.error,
        ),
    )
