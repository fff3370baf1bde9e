"""The agent config file: what the traces cannot say about the agent (router nodes, …).

Read from TOML, JSON or YAML by the file's extension. Unknown keys are refused, so a typo does
not silently change how steps are classified.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from agent_backtest.errors import InputError
from agent_backtest.input_files import load_json, load_toml, load_yaml
from agent_backtest.record_model import StrictModel

DEFAULT_ROUTING_PREFIXES = ("go_to_", "transfer_to_", "route_to_")
DEFAULT_END_SESSION_TOOLS = ("__end_session_action__", "end_session", "end_conversation")
ROUTER_RULES = frozenset({"router_nodes", "routing_tool_prefixes", "end_session_tools"})


class AgentConfig(StrictModel):
    """Facts about the agent that classify and score its steps."""

    router_nodes: list[str] = Field(
        default_factory=list, description="Node names whose steps are routing decisions."
    )
    routing_tool_prefixes: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ROUTING_PREFIXES),
        description="A tool whose name starts with one of these routes to another node.",
    )
    end_session_tools: list[str] = Field(
        default_factory=lambda: list(DEFAULT_END_SESSION_TOOLS),
        description="Tools that end the session; they count as routing tools.",
    )
    equivalent_tools: list[list[str]] = Field(
        default_factory=list, description="Groups of tool names that count as the same tool."
    )
    arg_defaults: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Per tool, argument values equal to leaving the argument out.",
    )
    free_text_args: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Per tool, string arguments whose values are prose, judged by meaning.",
    )
    unordered_args: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Per tool, list arguments whose order carries no meaning.",
    )
    read_only_tools: list[str] = Field(
        default_factory=list,
        description="Tools that never change the agent's data (abt simulate plays flows that "
        "expect only these without isolation).",
    )
    mutating_tools: list[str] = Field(
        default_factory=list, description="Tools that change the agent's data."
    )
    answer_keys: str | None = Field(
        default=None,
        description="A gold file of answer keys (JSON lines of unit_id and calls, see "
        "units/answer_key.py) for units that carry none; relative to the config file.",
    )

    @model_validator(mode="after")
    def _side_effects_agree(self) -> AgentConfig:
        """A tool cannot be both read-only and mutating."""
        both = sorted(set(self.read_only_tools) & set(self.mutating_tools))
        if both:
            raise ValueError(f"{', '.join(both)}: in both read_only_tools and mutating_tools")
        return self

    def is_routing_tool(self, name: str) -> bool:
        """True for a tool that hands the conversation to another node or ends it."""
        return name in self.end_session_tools or name.startswith(tuple(self.routing_tool_prefixes))

    def sets_router_rules(self) -> bool:
        """True when a router rule was given (file or ``--router-nodes``), not only defaulted."""
        return bool(ROUTER_RULES & self.model_fields_set)


def load_agent_config(path: Path) -> AgentConfig:
    """Read an agent config file; any problem is an :class:`InputError` naming the key."""
    data = _parse(path)
    if not isinstance(data, dict):
        raise InputError(path, "$", "the agent config must be a table/object of settings")
    try:
        config = AgentConfig.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(part) for part in error["loc"])
        allowed = ", ".join(AgentConfig.model_fields)
        raise InputError(path, key, f"{error['msg']} (settings: {allowed})") from None
    if config.answer_keys is not None:
        # Resolved here, so a run's recorded config finds the file from any directory.
        gold = (path.parent / config.answer_keys).resolve()
        if not gold.is_file():
            raise InputError(path, "answer_keys", f"no gold file at {gold}")
        config.answer_keys = str(gold)
    return config


def _parse(path: Path) -> Any:
    """The file's settings, read as its suffix says."""
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return load_toml(path, "agent config")
    if suffix == ".json":
        return load_json(path, "agent config")
    if suffix in (".yaml", ".yml"):
        return load_yaml(path, "agent config")
    raise InputError(path, None, "unknown config type: use a .toml, .json or .yaml file")
