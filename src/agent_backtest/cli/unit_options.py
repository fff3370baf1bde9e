"""Options about the agent, shared by the commands that build units."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent_backtest.units import AgentConfig, load_agent_config

AgentConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--agent-config",
        metavar="FILE",
        help="Agent config file (TOML, JSON or YAML): router_nodes, "
        "routing_tool_prefixes, end_session_tools, equivalent_tools, arg_defaults.",
    ),
]
RouterNodesOption = Annotated[
    str | None,
    typer.Option(
        "--router-nodes",
        metavar="NAMES",
        help="Comma-separated node names whose steps are routing "
        "decisions (added to the agent config's).",
    ),
]


def agent_config(path: Path | None, router_nodes: str | None) -> AgentConfig:
    """The agent config from its file (or the defaults), with ``--router-nodes`` added."""
    config = load_agent_config(path) if path else AgentConfig()
    if router_nodes:
        extra = [name.strip() for name in router_nodes.split(",") if name.strip()]
        config.router_nodes = sorted(set(config.router_nodes) | set(extra))
    return config
