"""One episode: the agent's turns through its model client, its tool calls into the environment,
and the user's replies, until the episode rules end it.

The agent is given the environment's policy as its system prompt and its tools; each turn it
either calls tools (each call the rules let through runs in the environment, and its output is
the next message) or speaks, and then the user answers. The episode ends when the user says the
stop marker, when a tool call ends it (``environment.done``), when the agent has answered a case
that has no user, or after ``max_steps`` agent turns. A model that fails (after its retries), a
user that fails, an environment that raises or an episode past its time end it as an
engineering error: recorded with its kind, never a reward.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agent_backtest.bench.environment import Environment
from agent_backtest.bench.models import EpisodeError, EpisodeRules
from agent_backtest.bench.rollouts import Rollout
from agent_backtest.bench.users import CallsLost, ModelCaller, User
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
    Turn,
    add_usage,
)
from agent_backtest.trace.openai_wire import message_from_openai, tool_def_from_openai

AGENT_NODE = "agent"


@dataclass(frozen=True)
class Agent:
    """The agent side: how the ``agent`` role's model is asked, and the model."""

    client: ModelCaller
    model: str
    provider: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Episode:
    """An episode as it went: what the record says, the conversation, and the trace's turns."""

    rollout: Rollout
    messages: list[Message] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    ended_by: str = "step_limit"
    error: EpisodeError | None = None
    steps: int = 0
    tool_calls: int = 0
    model_calls: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    seconds: float = 0.0
    state_hash: str | None = None

    def end(self, how: str, error: EpisodeError | None = None) -> None:
        """Say how the episode ended."""
        self.ended_by, self.error = how, error

    def add_user(self, text: str) -> None:
        """A user message: it opens a new turn of the trace."""
        self.messages.append(Message(role="user", content=text))
        self.turns.append(Turn(index=len(self.turns), user_input=text))

    def add_step(self, step: Step) -> None:
        """A step of the current turn (a first turn when none was opened)."""
        if not self.turns:
            self.turns.append(Turn(index=0))
        self.turns[-1].steps.append(step)

    def count_usage(self, response: LLMResponse) -> None:
        """The agent call's tokens, when it reports them (missing stays None, never 0)."""
        totals = (self.input_tokens, self.output_tokens)
        self.input_tokens, self.output_tokens = add_usage(totals, response.usage)


async def run_episode(
    rollout: Rollout,
    new_environment: Callable[[], Environment],
    agent: Agent,
    user: User | None,
    rules: EpisodeRules,
    timeout: float,
) -> Episode:
    """Run one episode in a fresh environment to its end; an engineering failure ends it with
    an error, never raises."""
    episode = Episode(rollout)
    started = time.monotonic()
    try:
        environment = new_environment()
        async with asyncio.timeout(timeout):
            await _play(episode, environment, agent, user, rules)
        episode.state_hash = environment.state_hash()
    except TimeoutError:
        episode.end("error", EpisodeError(kind="episode_timeout", detail=f"past {timeout:g} s"))
    except CallsLost:  # the machines calling are gone, not this episode: the run stops
        raise
    except Exception as exc:  # the environment's own code failed: an engineering error
        episode.end("error", EpisodeError(kind="environment_error", detail=_describe(exc)))
    episode.seconds = round(time.monotonic() - started, 3)
    return episode


async def _play(
    episode: Episode,
    environment: Environment,
    agent: Agent,
    user: User | None,
    rules: EpisodeRules,
) -> None:
    """The turns of the episode (see the module docstring)."""
    case = episode.rollout.case
    environment.reset(case)
    tools = [tool_def_from_openai(tool) for tool in environment.tools()]
    policy = environment.policy()
    if policy:
        episode.messages.append(Message(role="system", content=policy))
    for raw in case.messages or []:
        message = message_from_openai(raw)
        if message.role == "user":
            episode.add_user(message.text())
        else:
            episode.messages.append(message)
    agent_said: list[str] = []
    user_said: list[str] = []
    if case.messages:  # the opening messages stand in for a user: the agent's answer ends it
        user = None
    if user is not None and not await _user_turn(
        episode, user, agent_said, user_said, rules.stop_marker
    ):
        return
    while episode.steps < rules.max_steps:
        answer = await _agent_turn(episode, agent, tools)
        if answer is None:
            return
        if answer.tool_calls:
            if _run_calls(episode, environment, answer, rules):
                return
            continue
        agent_said.append(answer.text())
        episode.messages.append(Message(role="assistant", content=answer.content))
        if user is None:
            return episode.end("answer")
        if not await _user_turn(episode, user, agent_said, user_said, rules.stop_marker):
            return
    episode.end("step_limit")


async def _agent_turn(episode: Episode, agent: Agent, tools: list[ToolDef]) -> Message | None:
    """One call of the agent's model; its answer, or None when the call failed."""
    request = LLMRequest(
        model=agent.model, messages=list(episode.messages), tools=tools, params=dict(agent.params)
    )
    started = datetime.now(UTC)
    try:
        outcome = await agent.client.generate(request, agent.model, episode.rollout.seed)
    except CallsLost:
        raise
    except Exception as exc:  # a provider failing outside its classified errors (a local model
        # refusing a prompt longer than its context, say): the model's failure, not the tools'
        episode.end("error", EpisodeError(kind="model_error", detail=_describe(exc)))
        return None
    episode.steps += 1
    episode.model_calls += 1
    step = Step(
        id=f"llm-{episode.steps}",
        kind="llm",
        name=AGENT_NODE,
        started_at=started,
        ended_at=datetime.now(UTC),
        status="ok" if outcome.error is None else "error",
        llm=LLMCall(request=request, response=outcome.response, provider=agent.provider),
    )
    if outcome.error is not None:
        step.error = redact(outcome.error.detail)
        episode.add_step(step)
        episode.end("error", EpisodeError(kind=f"model_{outcome.error.kind}", detail=step.error))
        return None
    assert outcome.response is not None
    episode.add_step(step)
    episode.count_usage(outcome.response)
    return outcome.response.message


def _run_calls(
    episode: Episode, environment: Environment, answer: Message, rules: EpisodeRules
) -> bool:
    """Run the answer's tool calls the rules let through; True when a call ended the episode."""
    calls = answer.tool_calls or []
    if rules.first_tool_call_only:
        calls = calls[:1]
    calls = [
        call if call.id else call.model_copy(update={"id": f"call-{episode.steps}-{i}"})
        for i, call in enumerate(calls)
    ]
    episode.messages.append(Message(role="assistant", content=answer.content, tool_calls=calls))
    for call in calls:
        started = datetime.now(UTC)
        output, error = _call_tool(episode, environment, call)
        episode.messages.append(Message(role="tool", content=output, tool_call_id=call.id))
        episode.add_step(
            Step(
                id=f"tool-{episode.steps}-{call.id}",
                kind="tool",
                name=call.name,
                started_at=started,
                ended_at=datetime.now(UTC),
                status="error" if error else "ok",
                error=output if error else None,
                tool=ToolExecution(
                    name=call.name,
                    call_id=call.id,
                    arguments=call.arguments,
                    arguments_raw=call.arguments_raw,
                    arguments_error=call.arguments_error,
                    result=output,
                    error=output if error else None,
                ),
            )
        )
        if environment.done:
            episode.end("terminal_tool")
            return True
    return False


def _call_tool(episode: Episode, environment: Environment, call: ToolCall) -> tuple[str, bool]:
    """(what the agent sees, whether it is a refusal); arguments that are not a JSON object
    are refused to the agent without reaching the environment."""
    if not isinstance(call.arguments, dict):
        why = call.arguments_error or "they are not a JSON object"
        return f"Error: the arguments of {call.name} cannot be read ({why})", True
    outcome = environment.call(call.name, call.arguments)
    episode.tool_calls += 1
    return outcome.output, outcome.error


async def _user_turn(
    episode: Episode,
    user: User,
    agent_said: list[str],
    user_said: list[str],
    stop_marker: str | None,
) -> bool:
    """The user's next message added; False when the episode ended (stop marker, or error)."""
    turn = await user.speak(agent_said, user_said)
    if turn.text is None:
        detail = turn.error_detail or "no answer"
        episode.end("error", EpisodeError(kind=f"user_{turn.error_kind}", detail=detail))
        return False
    user_said.append(turn.text)
    episode.add_user(turn.text)
    if stop_marker and stop_marker in turn.text:
        episode.end("stop_marker")
        return False
    return True


def _describe(exc: BaseException) -> str:
    """An exception as one redacted, bounded line."""
    return bounded(redact(f"{type(exc).__name__}: {exc}"), 300)
