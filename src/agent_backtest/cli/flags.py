"""Flags generated from groups of settings, each flag written once.

A group is a dataclass whose fields are flags, with each field's docstring as its help: the
library's groups (``ReadingOptions``, ``CallOptions``, …: their flag types and bounds are in
``FLAG_SPECS``, their panel of --help in ``PANELS``), and a command's own groups, whose fields
say all of it (``field(default=None, metadata=flag(INPUTS, "FILE"))``). A command decorated
with ``@with_groups()`` names the groups it takes in its signature (``reading:
ReadingOptions``); its signature gains one flag per field of each, and it is called with one
filled-in instance per group. A field's flag is its name with dashes (see ``cli/errors.py``), so
an error the library raises about a field names the flag that sets it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from agent_backtest.api import options
from agent_backtest.cli.errors import flag_of
from agent_backtest.cli.options import (
    CALLS,
    INPUTS,
    MAX_CONCURRENCY,
    MAX_SECONDS,
    ROLES,
    SCORING,
    SELECTION,
    with_bounds,
)
from agent_backtest.cli.roles import JudgeFlags

# The panel of --help each group's flags are listed under (see cli/options.py).
PANELS: dict[type, str] = {
    options.ReadingOptions: INPUTS,
    options.AgentOptions: INPUTS,
    options.SelectionOptions: SELECTION,
    options.CaseOptions: SELECTION,
    JudgeFlags: ROLES,
    options.CallOptions: CALLS,
    options.BatchOptions: CALLS,
    options.ExecutorOptions: CALLS,
    options.RolloutOptions: CALLS,
    options.JudgeOptions: SCORING,
    options.GateBars: SCORING,
}

# Per group, per field: the type typer parses, and the option's metavar, help and bounds.
Spec = tuple[Any, dict[str, Any]]
FLAG_SPECS: dict[type, dict[str, Spec]] = {
    options.ReadingOptions: {
        "format": (str | None, {"metavar": "NAME"}),
        "tools": (Path | None, {"metavar": "FILE"}),
        "recorded_model": (str | None, {"metavar": "MODEL"}),
        "strict": (bool, {}),
    },
    options.AgentOptions: {
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
    options.SelectionOptions: {
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
    options.CallOptions: {
        "concurrency": (int | None, {"metavar": "N", "min": 1, "max": MAX_CONCURRENCY}),
        "rpm": (float | None, {"metavar": "N", "min": 1}),
        "tpm": (float | None, {"metavar": "N", "min": 1}),
        "timeout": (float | None, {"metavar": "SECONDS", "min": 0.001, "max": MAX_SECONDS}),
        "max_retries": (int | None, {"metavar": "N", "min": 0, "max": 100, "help": "Retries of "
                                     "a 429, 5xx, connection error or malformed answer, with "
                                     "exponential backoff honouring Retry-After; a timeout is "
                                     "retried once "
                                     "[default: 4]."}),
        "max_answer_bytes": (int | None, {"metavar": "N", "min": 1024, "max": 1024**3}),
        "base_url": (str | None, {"metavar": "URL", "help": "Endpoint of the candidate's "
                                  "provider (any OpenAI-compatible server for openai/…)."}),
        "cache": (bool, {"flag": "--cache/--no-cache", "help": "Read and fill the response "
                         "cache (--no-cache: neither)."}),
        "cache_dir": (Path | None, {"metavar": "DIR", "help": "Response cache [default: the "
                                    "user cache dir]."}),
    },
    options.BatchOptions: {
        "batch": (bool, {}),
        "batch_poll": (float | None, {"metavar": "SECONDS", "min": 0.001, "max": MAX_SECONDS}),
        "batch_size": (int | None, {"metavar": "N", "min": 1}),
    },
    options.ExecutorOptions: {
        "executor": (Literal["local", "ray"], {"metavar": "local|ray"}),
        "ray_address": (str | None, {"metavar": "ADDR"}),
    },
    JudgeFlags: {
        "judge": (str | None, {"metavar": "MODEL"}),
        "fallback_judge": (str | None, {"metavar": "MODEL"}),
    },
    options.JudgeOptions: {
        "judge_repeats": (int, {"metavar": "N", "min": 1, "max": 100}),
        "exact_strings": (bool, {}),
    },
    options.CaseOptions: {
        "case_ids": (list[str] | None, {"flag": "--case-id", "metavar": "ID"}),
        "shard_count": (int, {"metavar": "N", "min": 1}),
        "shard_index": (int, {"metavar": "I", "min": 0}),
        "limit": (int | None, {"metavar": "N", "min": 1}),
    },
    options.RolloutOptions: {
        "rollouts": (int, {"metavar": "N", "min": 1, "max": 1000}),
        "seed": (int, {"metavar": "N"}),
        "concurrency": (int, {"metavar": "N", "min": 1, "max": MAX_CONCURRENCY}),
        "episode_timeout": (float, {"metavar": "SECONDS", "min": 0.001, "max": MAX_SECONDS}),
    },
    options.GateBars: {
        bar: (int | None, {"metavar": "N", "min": 0}) if bar == "max_infra_errors"
        else (float | None, {"metavar": "F", "min": 0.0, "max": 1.0})
        for bar in (field.name for field in dataclasses.fields(options.GateBars))
    },
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Only:
    """Some flags of a group, for a command that takes only these (the rest keep their
    defaults)."""

    group: type
    fields: Collection[str]


GroupFlags = type | Only


def flag(panel: str, metavar: str | None = None, **spec: Any) -> dict[str, Any]:
    """The metadata of a field of a command's own flag group
    (``field(default=None, metadata=flag(INPUTS, "FILE"))``): the panel of --help it is listed
    under, its metavar, and the rest of its option (``flag="-o --output"``, bounds); its help is
    the field's docstring, as in the library's groups."""
    if metavar is not None:
        spec["metavar"] = metavar
    return {"panel": panel, "spec": spec}


def with_groups(**only: Only) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command the flags of each group its signature takes (a parameter annotated with
    one of the library's groups, or with a command's own group of ``flag`` fields), or ``only``
    some flags of one; it is called with an instance per group."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(command, eval_str=True)
        groups = {
            p.name: only.get(p.name, p.annotation)
            for p in signature.parameters.values()
            if _is_group(p.annotation)
        }
        own = [p for p in signature.parameters.values() if p.name not in groups]
        added = [
            _parameter(_group(flags), field)
            for flags in groups.values()
            for field in _fields(flags)
        ]

        @functools.wraps(command)
        def run(**values: Any) -> Any:
            for name, flags in groups.items():
                values[name] = _instance(flags, values)
            return command(**values)

        parameters = own + added
        run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        return run

    return decorate


def _is_group(annotation: Any) -> bool:
    """Whether a parameter's type is a group of flags."""
    if not (isinstance(annotation, type) and dataclasses.is_dataclass(annotation)):
        return False
    fields = dataclasses.fields(annotation)
    return annotation in FLAG_SPECS or any("panel" in field.metadata for field in fields)


def _group(flags: GroupFlags) -> type:
    return flags.group if isinstance(flags, Only) else flags


def _fields(flags: GroupFlags) -> list[dataclasses.Field[Any]]:
    """The fields of a group that get a flag, in their order."""
    group = _group(flags)
    if isinstance(flags, Only):
        return [field for field in dataclasses.fields(group) if field.name in flags.fields]
    if group in FLAG_SPECS:
        return [field for field in dataclasses.fields(group) if field.name in FLAG_SPECS[group]]
    return [field for field in dataclasses.fields(group) if "panel" in field.metadata]


def _parameter(group: type, field: dataclasses.Field[Any]) -> inspect.Parameter:
    """The typer parameter of one field: its flag, metavar, help (the field's docstring) and
    the group's panel."""
    if group in FLAG_SPECS:
        kind, spec = FLAG_SPECS[group][field.name]
        panel = PANELS[group]
    else:  # a command's own group: its fields say it all
        kind, spec = _hints(group)[field.name], field.metadata["spec"]
        panel = field.metadata["panel"]
    spec = dict(spec)
    flags = spec.pop("flag", flag_of(field.name)).split(" ")
    spec.setdefault("help", _field_help(group, field.name))
    default = field.default if field.default is not dataclasses.MISSING else None
    if isinstance(default, tuple):
        default = None  # an empty list: typer's "not given"
    option = typer.Option(*flags, rich_help_panel=panel, **with_bounds(kind, spec))
    return inspect.Parameter(
        _cli_name(group, field.name),
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[kind, option],
    )


def _cli_name(group: type, field: str) -> str:
    """The command parameter a field becomes (unique across groups)."""
    return f"{group.__name__}__{field}"


def _instance(flags: GroupFlags, values: dict[str, Any]) -> Any:
    """The group filled in from the parsed flags (removed from ``values``)."""
    given = {}
    for field in _fields(flags):
        value = values.pop(_cli_name(_group(flags), field.name))
        if value is None and isinstance(field.default, tuple):
            value = ()
        given[field.name] = value
    return _group(flags)(**given)


@functools.cache
def _hints(group: type) -> dict[str, Any]:
    """The field types of a command's own group, evaluated once for all its fields."""
    return typing.get_type_hints(group)


@functools.cache
def _docstrings(group: type) -> dict[str, str]:
    """The attribute docstrings of a dataclass, by field (from its source)."""
    import ast
    import itertools

    body = _classes_of(inspect.getfile(group))[group.__name__].body
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


@functools.cache
def _classes_of(source_file: str) -> dict[str, Any]:
    """The classes a source file defines at its top level, by name, parsed once: a command's
    groups mostly come from one file, which ``inspect.getsource`` would parse again for each."""
    import ast

    tree = ast.parse(Path(source_file).read_text(encoding="utf-8"))
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def _field_help(group: type, field: str) -> str:
    return _docstrings(group).get(field, "")
