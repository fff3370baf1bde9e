"""Options about the agent and the unit selection, shared by ``abt units`` and ``abt replay``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from agent_backtest.units import (
    DEFAULT_SPLIT_SALT,
    AgentConfig,
    Selection,
    load_agent_config,
    read_session_ids,
)

AgentConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--agent-config",
        metavar="FILE",
        help="Agent config file (TOML, JSON or YAML): "
        "router_nodes, routing_tool_prefixes, end_session_tools, equivalent_tools, "
        "arg_defaults, free_text_args, unordered_args.",
    ),
]
RouterNodesOption = Annotated[
    str | None,
    typer.Option(
        "--router-nodes",
        metavar="NAMES",
        help="Comma-separated node names whose steps "
        "are routing decisions (added to the agent config's).",
    ),
]
StepsOption = Annotated[
    Literal["router", "action", "all"],
    typer.Option(
        "--steps", metavar="router|action|all", help="Keep router steps, action steps, or all."
    ),
]
NodeOption = Annotated[
    list[str] | None,
    typer.Option("--node", metavar="NAME", help="Keep only steps of this node (repeatable)."),
]
AgentVersionOption = Annotated[
    list[str] | None,
    typer.Option(
        "--agent-version",
        metavar="VERSION",
        help="Keep only steps served by this agent version, as the trace recorded it (repeatable).",
    ),
]
ValFractionOption = Annotated[
    float | None,
    typer.Option(
        "--val-fraction",
        min=0.0,
        max=1.0,
        metavar="F",
        help="Label each session val with this probability (by a salted hash of its "
        "id), else test.",
    ),
]
SplitSaltOption = Annotated[
    str,
    typer.Option("--split-salt", metavar="SALT", help="Salt of the split hash."),
]
SplitOption = Annotated[
    Literal["test", "val", "all"],
    typer.Option(
        "--split", metavar="test|val|all", help="Keep only this split (needs --val-fraction)."
    ),
]
ExcludeSessionsOption = Annotated[
    Path | None,
    typer.Option(
        "--exclude-sessions",
        metavar="FILE",
        help="Leave out these sessions: a file of ids (one per line), a units or sessions "
        "JSONL, a run directory, a results.csv, or a JSON list of sessions or ids.",
    ),
]
PerSessionOption = Annotated[
    int | None,
    typer.Option(
        "--per-session",
        min=1,
        metavar="N",
        help="Keep at most N units of each session (a slice across sessions).",
    ),
]
LimitOption = Annotated[
    int | None,
    typer.Option("--limit", min=0, metavar="N", help="Keep at most this many units."),
]


def agent_config(path: Path | None, router_nodes: str | None) -> AgentConfig:
    """The agent config from its file (or the defaults), with ``--router-nodes`` added."""
    config = load_agent_config(path) if path else AgentConfig()
    if router_nodes:
        extra = [name.strip() for name in router_nodes.split(",") if name.strip()]
        config.router_nodes = sorted(set(config.router_nodes) | set(extra))
    return config


def make_selection(
    steps: str,
    nodes: list[str] | None,
    models: list[str] | None,
    val_fraction: float | None,
    split_salt: str | None,
    split: str,
    exclude_sessions: Path | None,
    limit: int | None,
    per_session: int | None = None,
    agent_versions: list[str] | None = None,
) -> Selection:
    """The selection the flags describe; an impossible combination is a usage error."""
    try:
        return Selection(
            steps=steps,  # type: ignore[arg-type]
            nodes=frozenset(nodes or ()),
            models=frozenset(models or ()),
            agent_versions=frozenset(agent_versions or ()),
            val_fraction=val_fraction,
            split_salt=split_salt or DEFAULT_SPLIT_SALT,
            split=split,  # type: ignore[arg-type]
            excluded_sessions=read_session_ids(exclude_sessions) if exclude_sessions else None,
            limit=limit,
            per_session=per_session,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
