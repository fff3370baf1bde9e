"""Flags for the library's groups of settings, written once and shared by every command.

A command declares the groups it takes (``@with_groups(reading=ReadingOptions, …)``); its
signature gains one flag per field of each group, and it is called with one filled-in instance
per group. A field's flag is its name with dashes (see ``cli/errors.py``), so an error the
library raises about a field names the flag that sets it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from agent_backtest.api.options import (
    AgentOptions,
    BatchOptions,
    CallOptions,
    CaseOptions,
    ExecutorOptions,
    JudgeOptions,
    ReadingOptions,
    RolloutOptions,
    SelectionOptions,
)
from agent_backtest.cli.errors import flag_of
from agent_backtest.cli.roles import JudgeFlags

# Per group, per field: the type typer parses, and the option's metavar, help and bounds.
Spec = tuple[Any, dict[str, Any]]
FLAG_SPECS: dict[type, dict[str, Spec]] = {
    ReadingOptions: {
        "format": (str | None, {"metavar": "NAME"}),
        "tools": (Path | None, {"metavar": "FILE"}),
        "recorded_model": (str | None, {"metavar": "MODEL"}),
        "strict": (bool, {}),
    },
    AgentOptions: {
        "agent_config": (
            Path | None,
            {
                "metavar": "FILE",
                "help": "Agent config file (TOML, JSON or YAML): router_nodes, "
                "routing_tool_prefixes, end_session_tools, equivalent_tools, arg_defaults, "
                "free_text_args, unordered_args, answer_keys (a gold file).",
            },
        ),
        "router_nodes": (
            list[str] | None,
            {
                "metavar": "NAMES",
                "help": "Comma-separated node names whose steps are routing decisions (added "
                "to the agent config's; repeatable).",
            },
        ),
    },
    SelectionOptions: {
        "steps": (Literal["router", "action", "all"], {"metavar": "router|action|all"}),
        "nodes": (list[str] | None, {"metavar": "NAME", "help": "Keep only steps of this node "
                                     "(repeatable)."}),
        "from_models": (list[str] | None, {"metavar": "MODEL", "help": "Keep only steps "
                                           "answered by this recorded model (repeatable)."}),
        "agent_versions": (list[str] | None, {"metavar": "V", "help": "Keep only steps "
                                              "served by this agent version (repeatable)."}),
        "val_fraction": (float | None, {"metavar": "F", "min": 0.0, "max": 1.0}),
        "split_salt": (str, {"metavar": "SALT"}),
        "split": (Literal["test", "val", "all"], {"metavar": "test|val|all", "help": "Keep only "
                                                 "this split (needs --val-fraction)."}),
        "exclude_sessions": (Path | None, {"metavar": "FILE"}),
        "limit": (int | None, {"metavar": "N", "min": 0}),
        "per_session": (int | None, {"metavar": "N", "min": 1}),
    },
    CallOptions: {
        "concurrency": (int | None, {"metavar": "N", "min": 1}),
        "rpm": (float | None, {"metavar": "N", "min": 1}),
        "tpm": (float | None, {"metavar": "N", "min": 1}),
        "timeout": (float | None, {"metavar": "SECONDS", "min": 0.001}),
        "max_retries": (int | None, {"metavar": "N", "min": 0, "help": "Retries of a 429, 5xx, "
                                     "connection error or malformed answer, with exponential "
                                     "backoff honouring Retry-After; a timeout is retried once "
                                     "[default: 4]."}),
        "base_url": (str | None, {"metavar": "URL", "help": "Endpoint of the candidate's "
                                  "provider (any OpenAI-compatible server for openai/…)."}),
        "cache": (bool, {"flag": "--cache/--no-cache", "help": "Read and fill the response "
                         "cache (--no-cache: neither)."}),
        "cache_dir": (Path | None, {"metavar": "DIR", "help": "Response cache [default: the "
                                    "user cache dir]."}),
    },
    BatchOptions: {
        "batch": (bool, {}),
        "batch_poll": (float | None, {"metavar": "SECONDS", "min": 0.001}),
        "batch_size": (int | None, {"metavar": "N", "min": 1}),
    },
    ExecutorOptions: {
        "executor": (Literal["local", "ray"], {"metavar": "local|ray"}),
        "ray_address": (str | None, {"metavar": "ADDR"}),
    },
    JudgeFlags: {
        "judge": (str | None, {"metavar": "MODEL"}),
        "fallback_judge": (str | None, {"metavar": "MODEL"}),
    },
    JudgeOptions: {
        "judge_repeats": (int, {"metavar": "N", "min": 1}),
        "exact_strings": (bool, {}),
    },
    CaseOptions: {
        "case_ids": (list[str] | None, {"flag": "--case-id", "metavar": "ID"}),
        "shard_count": (int, {"metavar": "N", "min": 1}),
        "shard_index": (int, {"metavar": "I", "min": 0}),
        "limit": (int | None, {"metavar": "N", "min": 1}),
    },
    RolloutOptions: {
        "rollouts": (int, {"metavar": "N", "min": 1}),
        "seed": (int, {"metavar": "N"}),
        "concurrency": (int, {"metavar": "N", "min": 1}),
        "episode_timeout": (float, {"metavar": "SECONDS", "min": 0.001}),
    },
}  # fmt: skip


def with_groups(**groups: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command the flags of each named group; it receives an instance per group."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name not in groups]
        added = [
            _parameter(group, field)
            for group in groups.values()
            for field in dataclasses.fields(group)
            if field.name in FLAG_SPECS[group]
        ]

        @functools.wraps(command)
        def run(**values: Any) -> Any:
            for name, group in groups.items():
                values[name] = _instance(group, values)
            return command(**values)

        parameters = own + added
        run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        return run

    return decorate


def _parameter(group: type, field: dataclasses.Field[Any]) -> inspect.Parameter:
    """The typer parameter of one field: its flag, metavar, help (the field's docstring)."""
    kind, spec = FLAG_SPECS[group][field.name]
    spec = dict(spec)
    flags = spec.pop("flag", flag_of(field.name)).split(" ")
    spec.setdefault("help", _field_help(group, field.name))
    default = field.default if field.default is not dataclasses.MISSING else None
    if isinstance(default, tuple):
        default = None  # an empty list: typer's "not given"
    option = typer.Option(*flags, **spec)
    return inspect.Parameter(
        _cli_name(group, field.name),
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[kind, option],
    )


def _cli_name(group: type, field: str) -> str:
    """The command parameter a field becomes (unique across groups)."""
    return f"{group.__name__}__{field}"


def _instance(group: type, values: dict[str, Any]) -> Any:
    """The group filled in from the parsed flags (removed from ``values``)."""
    given = {}
    for field in dataclasses.fields(group):
        if field.name not in FLAG_SPECS[group]:
            continue
        value = values.pop(_cli_name(group, field.name))
        if value is None and isinstance(field.default, tuple):
            value = ()
        given[field.name] = value
    return group(**given)


@functools.cache
def _docstrings(group: type) -> dict[str, str]:
    """The attribute docstrings of a dataclass, by field (from its source)."""
    import ast
    import itertools

    tree = ast.parse(inspect.getsource(group))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for before, after in itertools.pairwise(body):
        if (
            isinstance(before, ast.AnnAssign)
            and isinstance(before.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[before.target.id] = " ".join(after.value.value.split())
    return docs


def _field_help(group: type, field: str) -> str:
    return _docstrings(group).get(field, "")
