"""The built-in agent loop as the target: the ``agent`` role's model with tools.

Each user turn runs the loop: the conversation so far (the system prompt, every earlier
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
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_backtest.errors import InputError, UserError
from agent_backtest.providers import CallCounters, ModelConfig
from agent_backtest.providers.client import ModelClient
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.roles import check_role, close_clients, open_clients
from agent_backtest.redaction import redact
from agent_backtest.simulate.models import ModelCall
from agent_backtest.simulate.targets.config import ModelTarget
from agent_backtest.simulate.targets.errors import TargetError
from agent_backtest.simulate.targets.events import TurnEvent
from agent_backtest.simulate.targets.mcp_tools import McpTools, check_server, list_server_tools
from agent_backtest.simulate.targets.tools import (
    PythonTools,
    ToolEnvironment,
    ToolOutcome,
    check_implemented,
    failed,
    load_functions,
    offered_tools,
)
from agent_backtest.simulate.targets.turns import TargetAnswer
from agent_backtest.trace import LLMRequest, LLMResponse, Message, ToolCall, ToolDef, add_usage

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
    return lambda: ModelAgent(target, file, environment(), offered, role, config)


@dataclass
class _Turn:
    """What one turn of the loop gathered: its events and its model calls."""

    events: list[TurnEvent] = field(default_factory=list)
    calls: list[ModelCall] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None

    def count(self, response: LLMResponse) -> None:
        """The call's tokens, when reported (missing stays None, never 0)."""
        totals = (self.input_tokens, self.output_tokens)
        self.input_tokens, self.output_tokens = add_usage(totals, response.usage)


class ModelAgent:
    """The agent role's client and the tool environment, shared by the run's conversations."""

    secrets: tuple[str, ...] = ()

    def __init__(
        self,
        target: ModelTarget,
        file: Path,
        tools: ToolEnvironment,
        offered: list[ToolDef] | None,
        role: ModelRole,
        config: ModelConfig,
    ) -> None:
        self.target = target
        self.file = file
        self.tools = tools
        self.offered = offered
        self.role = role
        self.config = config
        self.client: ModelClient | None = None

    async def start(self) -> None:
        """Start the tool environment (the tools offered: the file's, else its own), and open
        the agent's model client."""
        available = await self.tools.start()
        if self.offered is None:
            self.offered = available
        else:
            check_offered(self.offered, available, self.file)
        clients = open_clients(self.role, [self.role.ref], self.config, CallCounters())
        self.client = clients[self.role.ref]

    async def open(self, flow_id: str) -> ModelConversation:
        """A conversation with its own messages."""
        return ModelConversation(self)

    async def aclose(self) -> None:
        """Close the client and stop the tool environment."""
        if self.client is not None:
            await close_clients([self.client])
            self.client = None
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


class ModelConversation:
    """One conversation: its messages so far, as the model saw them."""

    def __init__(self, agent: ModelAgent) -> None:
        self.agent = agent
        system = agent.target.system
        self.messages = [Message(role="system", content=system)] if system else []

    async def turn(self, index: int, message: str, history: list[dict[str, str]]) -> TargetAnswer:
        """Run the loop for one user message within the turn's deadline."""
        self.messages.append(Message(role="user", content=message))
        started = time.perf_counter()
        turn = _Turn()
        timeout = self.agent.target.timeout
        try:
            async with asyncio.timeout(timeout):
                await self._loop(turn)
        except TimeoutError:
            raise TargetError("timeout", f"no answer within {timeout:g} s") from None
        turn.events.append(
            TurnEvent("usage", input_tokens=turn.input_tokens, output_tokens=turn.output_tokens)
        )
        return TargetAnswer(turn.events, None, (time.perf_counter() - started) * 1000, turn.calls)

    async def _loop(self, turn: _Turn) -> None:
        """Model calls and tool calls until a text answer or the step limit."""
        offered = self.agent.offered or []
        turn.events.append(TurnEvent("tools_offered", tools=[tool.name for tool in offered]))
        max_steps = self.agent.target.max_steps
        for step in range(1, max_steps + 1):
            answer = await self._ask(turn, offered)
            if not answer.tool_calls:
                self.messages.append(answer)
                turn.events.append(TurnEvent("final_text", text=answer.text()))
                return
            await self._run_calls(turn, answer, step)
        turn.events.append(
            TurnEvent(
                "error",
                message=f"step_limit: no text answer after {max_steps} model calls (max_steps)",
            )
        )

    async def _ask(self, turn: _Turn, offered: list[ToolDef]) -> Message:
        """One model call, kept; its answer, or a transport error when it failed."""
        agent = self.agent
        assert agent.client is not None  # start() opened it
        request = LLMRequest(
            model=agent.role.ref.model,
            messages=list(self.messages),
            tools=offered or None,
            params=dict(agent.target.params),
        )
        started_at = datetime.now(UTC).isoformat()
        started = time.perf_counter()
        try:
            outcome = await agent.client.generate(request, agent.role.ref.model, SEED)
        except Exception as exc:  # a provider failing outside its classified errors
            raise TargetError("model_error", f"{type(exc).__name__}: {exc}") from None
        error = redact(outcome.error.detail) if outcome.error is not None else None
        turn.calls.append(
            ModelCall(
                request=request,
                response=outcome.response,
                provider=agent.role.ref.provider,
                error=error,
                cached=outcome.cache_hit,
                started_at=started_at,
                ms=round((time.perf_counter() - started) * 1000, 3),
            )
        )
        if outcome.error is not None or outcome.response is None:
            kind = outcome.error.kind if outcome.error is not None else "no_answer"
            raise TargetError(f"model_{kind}", error or "the model gave no answer")
        turn.count(outcome.response)
        return outcome.response.message

    async def _run_calls(self, turn: _Turn, answer: Message, step: int) -> None:
        """Each tool call run in the environment, its result the next message."""
        calls = [
            call if call.id else call.model_copy(update={"id": f"call-{step}-{n}"})
            for n, call in enumerate(answer.tool_calls or [], 1)
        ]
        self.messages.append(Message(role="assistant", content=answer.content, tool_calls=calls))
        for call in calls:
            arguments: Any = call.arguments if call.arguments is not None else call.arguments_raw
            turn.events.append(
                TurnEvent("tool_start", name=call.name, arguments=arguments, call_id=call.id)
            )
            outcome = await self._call_tool(call)
            turn.events.append(
                TurnEvent(
                    "tool_result",
                    name=call.name,
                    call_id=call.id,
                    result=None if outcome.error else outcome.output,
                    message=outcome.error,
                )
            )
            self.messages.append(Message(role="tool", content=outcome.output, tool_call_id=call.id))

    async def close(self) -> None:
        """Nothing to close: the conversation is its messages."""

    async def _call_tool(self, call: ToolCall) -> ToolOutcome:
        """The call run; arguments that are not a JSON object never reach the tool."""
        if not isinstance(call.arguments, dict):
            why = call.arguments_error or "they are not a JSON object"
            return failed(f"the arguments of {call.name} cannot be read ({why})")
        return await self.agent.tools.call(call.name, call.arguments)
