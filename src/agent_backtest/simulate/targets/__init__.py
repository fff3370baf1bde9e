"""Targets: the live agent a simulate run plays its flows through.

One registry, by the ``type`` of the target file, that every kind of target goes through:
``http`` (an agent over HTTP, answering in JSON or server-sent events), ``python`` (a
callable) and ``model`` (the built-in agent loop: the ``agent`` role's model with Python or MCP
tools). ``prepare_agent`` does every check that needs no call (keys in the environment, the
callable and tool functions imported, the MCP command found, the agent role reachable) so a run
can refuse before it writes anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agent_backtest.errors import InputError, RecordError, UserError
from agent_backtest.formats.tools_file import load_tools_file
from agent_backtest.providers import ModelConfig
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.roles import check_role
from agent_backtest.simulate.targets.config import (
    HttpTarget,
    ModelTarget,
    PythonTarget,
    Target,
    load_target,
)
from agent_backtest.simulate.targets.errors import TargetError
from agent_backtest.simulate.targets.http import HttpAgent, http_secrets
from agent_backtest.simulate.targets.mcp_tools import McpTools, check_server, list_server_tools
from agent_backtest.simulate.targets.model import ModelAgent, check_offered
from agent_backtest.simulate.targets.python import PythonAgent, load_callable
from agent_backtest.simulate.targets.tools import PythonTools, ToolEnvironment, load_functions
from agent_backtest.simulate.targets.turns import TargetAnswer, assemble_turn
from agent_backtest.trace import ToolDef
from agent_backtest.trace.openai_wire import tool_def_from_openai


class Conversation(Protocol):
    """One conversation with the agent."""

    async def turn(self, index: int, message: str, history: list[dict[str, str]]) -> TargetAnswer:
        """Send one user message; what the agent did."""
        ...

    async def close(self) -> None:
        """End the conversation (tear its session down)."""
        ...


class Agent(Protocol):
    """A target, opened for a run."""

    secrets: tuple[str, ...]

    async def start(self) -> None:
        """Set up before the first conversation (fetch a credential)."""
        ...

    async def open(self, flow_id: str) -> Conversation:
        """Start one conversation."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


AgentFactory = Callable[[], Agent]


@dataclass(frozen=True)
class AgentRole:
    """The ``agent`` role of a run (the model target's model), with the config that reaches it."""

    role: ModelRole | None
    config: ModelConfig


def prepare_agent(target: Target, file: Path, agent: AgentRole) -> AgentFactory:
    """What opens the target's agent, after every check that needs no call."""
    return TARGET_TYPES[target.type](target, file, agent)


def _http(target: Any, file: Path, agent: AgentRole) -> AgentFactory:
    secrets = http_secrets(target)
    return lambda: HttpAgent(target, secrets)


def _python(target: Any, file: Path, agent: AgentRole) -> AgentFactory:
    function = load_callable(target, file)
    return lambda: PythonAgent(target, function)


def _model(target: Any, file: Path, agent: AgentRole) -> AgentFactory:
    """The tools offered read, their code imported or found, and the agent role checked."""
    model: ModelTarget = target
    tools = model.tools
    offered = None
    if tools.file is not None:
        offered = load_tools_file(file.parent / tools.file)
    elif tools.offered is not None:
        offered = _inline_tools(tools.offered, file)
    environment: Callable[[], ToolEnvironment]
    if tools.python is not None:
        functions = load_functions(tools, file)
        assert offered is not None  # the file's check: Python tools need their definitions
        _check_implemented(offered, functions, file)
        environment = lambda: PythonTools(functions, offered)  # noqa: E731
    else:
        assert tools.mcp is not None  # the file's check: one environment or the other
        check_server(tools.mcp, file)
        server = tools.mcp
        listed = list_server_tools(server, file)
        if offered is not None:
            check_offered(offered, listed, file)
        environment = lambda: McpTools(server, file)  # noqa: E731
    role = agent.role
    if role is None:
        raise UserError(
            "the model target runs the agent's model: name it (provider/model), or set model "
            "in [roles.agent] of abt.toml",
            "agent",
        )
    check_role(role, [role.ref], agent.config)
    return lambda: ModelAgent(model, file, environment(), offered, role, agent.config)


def _inline_tools(raw: list[dict[str, Any]], file: Path) -> list[ToolDef]:
    """``[[tools.offered]]``, each in OpenAI function format."""
    found = []
    for index, tool in enumerate(raw):
        try:
            found.append(tool_def_from_openai(tool))
        except RecordError as exc:
            raise InputError(file, f"tools.offered.{index}", exc.detail) from None
    return found


def _check_implemented(
    offered: list[ToolDef], functions: dict[str, Callable[..., Any]], file: Path
) -> None:
    """Every tool offered has a function, and every function is of a tool offered."""
    names = [tool.name for tool in offered]
    for name in names:
        if name not in functions:
            raise InputError(
                file, "tools.python", f"no function runs the tool {name!r}: add {name} = ..."
            )
    for name in functions:
        if name not in names:
            raise InputError(
                file, f"tools.python.{name}", "is not a tool offered: check its spelling"
            )


TARGET_TYPES: dict[str, Callable[[Any, Path, AgentRole], AgentFactory]] = {
    "http": _http,
    "python": _python,
    "model": _model,
}

__all__ = [
    "TARGET_TYPES",
    "Agent",
    "AgentFactory",
    "AgentRole",
    "Conversation",
    "HttpTarget",
    "ModelTarget",
    "PythonTarget",
    "Target",
    "TargetAnswer",
    "TargetError",
    "assemble_turn",
    "load_target",
    "prepare_agent",
]
