"""The built-in agent loop as the target: the ``agent`` role's model with tools.

Each user turn runs the agent loop of :mod:`agent_backtest.episodes.agent_loop`, the one a
bench episode runs: the conversation so far (the system prompt, every earlier
message, tool calls and results included) goes to the model with the tools offered; each tool
call it asks for runs in the tool environment and its result goes back; until the model answers
in text, or ``max_steps`` model calls have been made. A step-limit stop is the turn's named
error (``step_limit``), never a silent answer; a model call that fails after its retries is a
transport error (the conversation is not judged: the agent's code did nothing wrong).

Every model call is kept with the turn, the exact request and the answer, so the run's
``sessions.jsonl`` holds one LLM step per call, and ``abt units`` one replay unit per call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_backtest.episodes.agent_loop import (
    AgentModel,
    LoopState,
    ToolResult,
    TurnOutcome,
    run_turn,
)
from agent_backtest.episodes.calls import ModelCaller
from agent_backtest.errors import InputError, UserError
from agent_backtest.providers import ModelConfig
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.roles import check_role
from agent_backtest.simulate.models import ModelCall
from agent_backtest.simulate.targets.config import ModelTarget
from agent_backtest.simulate.targets.errors import TargetError
from agent_backtest.simulate.targets.events import TurnEvent
from agent_backtest.simulate.targets.mcp_tools import McpTools, check_server, list_server_tools
from agent_backtest.simulate.targets.tools import (
    PythonTools,
    ToolEnvironment,
    check_implemented,
    load_functions,
    offered_tools,
)
from agent_backtest.simulate.targets.turns import TargetAnswer
from agent_backtest.simulate.turn_errors import STEP_LIMIT
from agent_backtest.trace import Message, Step, ToolDef

SEED = 0
"""The seed of every agent call: a turn asked again is the same request."""


def prepare_model(
    target: ModelTarget, file: Path, role: ModelRole | None, config: ModelConfig
) -> Callable[[], ModelAgent]:
    """What opens the agent, after the checks: the agent role reachable, the tools offered
    read, their functions imported or the MCP server started once and listed."""
    if role is None:
        raise UserError(
            "the model target runs the agent's model: name it (provider/model), or set model "
            "in [roles.agent] of abt.toml",
            "agent",
        )
    check_role(role, [role.ref], config)
    tools = target.tools
    offered = offered_tools(tools, file)
    environment: Callable[[], ToolEnvironment]
    if tools.python is not None:
        functions = load_functions(tools, file)
        assert offered is not None  # the file's check: Python tools need their definitions
        check_implemented(offered, functions, file)
        environment = lambda: PythonTools(functions, offered)  # noqa: E731
    else:
        server = tools.mcp
        assert server is not None  # the file's check: one environment or the other
        check_server(server, file)
        listed = list_server_tools(server, file)
        if offered is not None:
            check_offered(offered, listed, file)
        environment = lambda: McpTools(server, file)  # noqa: E731
    return lambda: ModelAgent(target, file, environment(), offered, role)


class ModelAgent:
    """The agent role's model and the tool environment, shared by the run's conversations."""

    secrets: tuple[str, ...] = ()

    def __init__(
        self,
        target: ModelTarget,
        file: Path,
        tools: ToolEnvironment,
        offered: list[ToolDef] | None,
        role: ModelRole,
    ) -> None:
        self.target = target
        self.file = file
        self.tools = tools
        self.offered = offered
        self.role = role
        self.caller: ModelCaller | None = None

    async def start(self, models: Mapping[str, ModelCaller]) -> None:
        """Start the tool environment (the tools offered: the file's, else its own); the agent's
        model is asked through ``models["agent"]``, the run's calls of the agent role."""
        available = await self.tools.start()
        if self.offered is None:
            self.offered = available
        else:
            check_offered(self.offered, available, self.file)
        self.caller = models["agent"]

    async def open(self, flow_id: str) -> ModelConversation:
        """A conversation with its own messages."""
        assert self.caller is not None  # start() was given the agent's calls
        return ModelConversation(self, self.caller)

    async def aclose(self) -> None:
        """Stop the tool environment (the run closes the agent role's calls)."""
        await self.tools.aclose()


def check_offered(offered: list[ToolDef], available: list[ToolDef], file: Path) -> None:
    """Tools the file offers must be ones the environment has."""
    names = {tool.name for tool in available}
    for tool in offered:
        if tool.name not in names:
            raise InputError(
                file,
                "tools",
                f"offers {tool.name!r}, which the MCP server does not have (it has: "
                f"{', '.join(sorted(names)) or 'none'}): remove it, or leave the tools out to "
                "offer the server's",
            )


@dataclass(frozen=True)
class _Tools:
    """The tool environment as the agent loop runs it: no call ends a conversation."""

    environment: ToolEnvironment
    done: bool = False

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Run one tool call."""
        return await self.environment.call(name, arguments)


class ModelConversation:
    """One conversation: its messages so far, as the model saw them."""

    def __init__(self, agent: ModelAgent, caller: ModelCaller) -> None:
        self.agent = agent
        system = agent.target.system
        self.state = LoopState(
            messages=[Message(role="system", content=system)] if system else [],
            tools=list(agent.offered or []),
        )
        ref = agent.role.ref
        params = {**agent.target.params, **agent.role.sampling}  # the role's settings win
        self.model = AgentModel(caller, ref.model, ref.provider, params, SEED)

    async def turn(self, index: int, message: str, history: list[dict[str, str]]) -> TargetAnswer:
        """Run the loop for one user message within the turn's deadline."""
        self.state.messages.append(Message(role="user", content=message))
        started = time.perf_counter()
        events = [TurnEvent("tools_offered", tools=[tool.name for tool in self.state.tools])]
        calls: list[ModelCall] = []
        target = self.agent.target
        try:
            async with asyncio.timeout(target.timeout):
                turn = await run_turn(
                    self.state,
                    self.model,
                    _Tools(self.agent.tools),
                    target.max_steps,
                    lambda step: _record(step, events, calls),
                )
        except TimeoutError:
            raise TargetError("timeout", f"no answer within {target.timeout:g} s") from None
        _end(turn, events, target.max_steps)
        usage = turn.tokens
        events.append(TurnEvent("usage", input_tokens=usage.input, output_tokens=usage.output))
        return TargetAnswer(events, None, (time.perf_counter() - started) * 1000, calls)

    async def close(self) -> None:
        """Nothing to close: the conversation is its messages."""


def _record(step: Step, events: list[TurnEvent], calls: list[ModelCall]) -> None:
    """A step of the loop as the turn records it: a model call, or a tool's start and result."""
    if step.llm is not None:
        started = step.started_at
        ms = (step.ended_at - started).total_seconds() * 1000 if step.ended_at and started else None
        calls.append(
            ModelCall(
                request=step.llm.request,
                response=step.llm.response,
                provider=step.llm.provider,
                error=step.error,
                cached=bool(step.attributes.get("cached")),
                started_at=started.isoformat() if started else None,
                ms=round(ms, 3) if ms is not None else None,
            )
        )
        return
    tool = step.tool
    assert tool is not None  # the loop's steps are model calls and tool executions
    arguments: Any = tool.arguments if tool.arguments is not None else tool.arguments_raw
    events.append(
        TurnEvent("tool_start", name=tool.name, arguments=arguments, call_id=tool.call_id)
    )
    events.append(
        TurnEvent(
            "tool_result",
            name=tool.name,
            call_id=tool.call_id,
            result=None if tool.error else tool.result,
            message=tool.error,
        )
    )


def _end(turn: TurnOutcome, events: list[TurnEvent], max_steps: int) -> None:
    """The turn's last event: the text answer, the step limit; a failed model call is a
    transport error (the agent's code did nothing wrong)."""
    if turn.ending == "answer" and turn.answer is not None:
        events.append(TurnEvent("final_text", text=turn.answer.text()))
    elif turn.ending == "error":
        raise TargetError(turn.error_kind or "model_error", turn.error_detail or "no answer")
    else:
        events.append(
            TurnEvent(
                "error",
                message=f"{STEP_LIMIT}: no text answer after {max_steps} model calls (max_steps)",
            )
        )
