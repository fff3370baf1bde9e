"""Targets: the live agent a simulate run plays its flows through.

One registry, by the ``type`` of the target file, that every kind of target goes through
(:data:`TARGET_TYPES`, which installed packages add to):
``http`` (an agent over HTTP, answering in JSON or server-sent events), ``python`` (a
callable) and ``model`` (the built-in agent loop: the ``agent`` role's model with Python or MCP
tools). ``prepare_agent`` does every check that needs no call (keys in the environment, the
callable and tool functions imported, the MCP command found, the agent role reachable) so a run
can refuse before it writes anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from agent_backtest.episodes.calls import ModelCaller
from agent_backtest.providers import ModelConfig
from agent_backtest.providers.config import ModelRole
from agent_backtest.registry import Registry
from agent_backtest.simulate.targets.config import (
    HttpTarget,
    ModelTarget,
    PythonTarget,
    Target,
    TargetBase,
    load_target,
)
from agent_backtest.simulate.targets.errors import TargetError
from agent_backtest.simulate.targets.events import TurnEvent
from agent_backtest.simulate.targets.http import HttpAgent, http_secrets
from agent_backtest.simulate.targets.model import prepare_model
from agent_backtest.simulate.targets.python import PythonAgent, load_callable
from agent_backtest.simulate.targets.turns import TargetAnswer, assemble_turn


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

    async def start(self, models: Mapping[str, ModelCaller]) -> None:
        """Set up before the first conversation (fetch a credential); ``models`` are the run's
        calls of each role it plays through (``agent`` for the built-in agent loop)."""
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
    return TARGET_TYPES.load(target.type, "target").prepare(target, file, agent)


@dataclass(frozen=True)
class TargetType:
    """One ``type`` of target file: the model its file is read with, and what opens it.

    ``settings`` is a pydantic model of the whole file (``name``, ``type``, ``timeout`` and the
    type's own keys; subclass :class:`TargetBase`); ``prepare(target, file, agent)`` makes every
    check that needs no call and returns what opens an :class:`Agent` for the run.
    """

    settings: type[BaseModel]
    prepare: Callable[[Any, Path, AgentRole], AgentFactory]


def _http(target: Any, file: Path, agent: AgentRole) -> AgentFactory:
    secrets = http_secrets(target)
    return lambda: HttpAgent(target, secrets)


def _python(target: Any, file: Path, agent: AgentRole) -> AgentFactory:
    function = load_callable(target, file)
    return lambda: PythonAgent(target, function)


def _model(target: Any, file: Path, agent: AgentRole) -> AgentFactory:
    return prepare_model(target, file, agent.role, agent.config)


HTTP = TargetType(HttpTarget, _http)
PYTHON = TargetType(PythonTarget, _python)
MODEL = TargetType(ModelTarget, _model)

TARGET_GROUP = "agent_backtest.targets"
# The target types by name; installed packages add theirs (a TargetType, or any object with
# settings and prepare) under the entry point group agent_backtest.targets.
TARGET_TYPES = Registry(
    TARGET_GROUP,
    "target type",
    {
        "http": "agent_backtest.simulate.targets:HTTP",
        "python": "agent_backtest.simulate.targets:PYTHON",
        "model": "agent_backtest.simulate.targets:MODEL",
    },
    f"install a package that adds one (entry point group {TARGET_GROUP})",
    contract=("settings", "prepare"),
)

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
    "TargetBase",
    "TargetError",
    "TargetType",
    "TurnEvent",
    "assemble_turn",
    "load_target",
    "prepare_agent",
]
