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
from typing import Any

from agent_backtest.bench.environment import Environment
from agent_backtest.bench.models import EpisodeError, EpisodeRules
from agent_backtest.bench.rollouts import Rollout
from agent_backtest.bench.users import User
from agent_backtest.episodes.agent_loop import (
    AgentModel,
    LoopState,
    ToolResult,
    run_turn,
)
from agent_backtest.episodes.calls import CallsLost, ModelCaller, describe_failure
from agent_backtest.trace import Message, Step, Turn
from agent_backtest.trace.openai_wire import message_from_openai, tool_def_from_openai


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
    turns: list[Turn] = field(default_factory=list)
    loop: LoopState = field(default_factory=LoopState)
    ended_by: str = "step_limit"
    error: EpisodeError | None = None
    seconds: float = 0.0
    state_hash: str | None = None

    @property
    def messages(self) -> list[Message]:
        """The conversation as the agent last saw it."""
        return self.loop.messages

    @property
    def steps(self) -> int:
        """The agent's model calls (each a step of the episode's budget)."""
        return self.loop.model_calls

    @property
    def model_calls(self) -> int:
        """The agent's model calls."""
        return self.loop.model_calls

    @property
    def tool_calls(self) -> int:
        """Tool calls that reached the environment."""
        return self.loop.tool_calls

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

    @property
    def input_tokens(self) -> int | None:
        """The agent's input tokens, when its calls report them."""
        return self.loop.tokens.input

    @property
    def output_tokens(self) -> int | None:
        """The agent's output tokens, when its calls report them."""
        return self.loop.tokens.output


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
        episode.end("error", EpisodeError(kind="environment_error", detail=describe_failure(exc)))
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
    episode.loop.tools = [tool_def_from_openai(tool) for tool in environment.tools()]
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
    model = AgentModel(
        agent.client,
        agent.model,
        agent.provider,
        agent.params,
        episode.rollout.seed,
        rules.first_tool_call_only,
    )
    tools = EnvironmentTools(environment)
    while episode.steps < rules.max_steps:
        budget = rules.max_steps - episode.steps
        turn = await run_turn(episode.loop, model, tools, budget, episode.add_step)
        if turn.ending == "error":
            detail = turn.error_detail or "the model gave no answer"
            return episode.end("error", EpisodeError(kind=turn.error_kind, detail=detail))
        if turn.ending == "terminal_tool":
            return episode.end("terminal_tool")
        if turn.answer is None:  # the budget is spent
            break
        agent_said.append(turn.answer.text())
        if user is None:
            return episode.end("answer")
        if not await _user_turn(episode, user, agent_said, user_said, rules.stop_marker):
            return
    episode.end("step_limit")


@dataclass(frozen=True)
class EnvironmentTools:
    """An environment as the agent loop runs its tools: a refusal is the tool's error."""

    environment: Environment

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """The call run on the environment's current state."""
        outcome = self.environment.call(name, arguments)
        return ToolResult(outcome.output, outcome.output if outcome.error else None)

    @property
    def done(self) -> bool:
        """Whether a tool call ended the episode."""
        return self.environment.done


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
