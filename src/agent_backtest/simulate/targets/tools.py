"""The tool environment of the built-in agent loop: the code that runs the tools its model calls.

Two kinds, one protocol: Python functions (``module:function`` per tool, called with the
call's arguments as keywords) and the tools of an MCP server (:mod:`.mcp_tools`). A tool that
fails is a result the model reads (``Error: …``) and the turn records, never a crashed run:
the agent's own code failing is what a test conversation is there to find.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from agent_backtest.episodes.agent_loop import ToolResult, tool_failed
from agent_backtest.errors import InputError, RecordError, UserError
from agent_backtest.formats.tools_file import load_tools_file
from agent_backtest.plugins import load_object
from agent_backtest.simulate.targets.config import ModelTools
from agent_backtest.trace import ToolDef
from agent_backtest.trace.openai_wire import tool_def_from_openai


class ToolEnvironment(Protocol):
    """The code behind the tools, opened for a run."""

    async def start(self) -> list[ToolDef]:
        """Set up; the tools it has, with their definitions where it knows them."""
        ...

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Run one tool call."""
        ...

    async def aclose(self) -> None:
        """Release what ``start`` set up."""
        ...


def as_text(value: Any) -> str:
    """A tool's return value as the text the model reads (JSON unless it is a string)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def offered_tools(tools: ModelTools, file: Path) -> list[ToolDef] | None:
    """The tools the file offers (its tools file, or inline); None when it names none."""
    if tools.file is not None:
        return load_tools_file(file.parent / tools.file)
    if tools.offered is None:
        return None
    found = []
    for index, raw in enumerate(tools.offered):
        try:
            found.append(tool_def_from_openai(raw))
        except RecordError as exc:
            raise InputError(file, f"tools.offered.{index}", exc.detail) from None
    return found


def put_on_path(tools: ModelTools, file: Path) -> None:
    """The file's ``path`` folder on ``sys.path`` first, so its tool modules import."""
    if tools.path is not None:
        folder = str((file.parent / tools.path).resolve())
        if folder not in sys.path:
            sys.path.insert(0, folder)


def load_functions(tools: ModelTools, file: Path) -> dict[str, Callable[..., Any]]:
    """Each tool's function, imported now; one that cannot be is the file's error, by key."""
    put_on_path(tools, file)
    functions = {}
    for name, reference in (tools.python or {}).items():
        try:
            functions[name] = load_object(reference, f"tool {name!r}", "target")
        except UserError as exc:
            what = f"tool {name!r}: "
            raise InputError(file, f"tools.python.{name}", exc.message.removeprefix(what)) from None
    return functions


def check_implemented(
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


class PythonTools:
    """Python functions as the tools; a sync function runs in a worker thread."""

    def __init__(self, functions: dict[str, Callable[..., Any]], offered: list[ToolDef]) -> None:
        self.functions = functions
        self.offered = offered

    async def start(self) -> list[ToolDef]:
        """Nothing to start; the tools are the ones the file defines."""
        return self.offered

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Call the function with the arguments as keywords; what it raises is its error."""
        function = self.functions.get(name)
        if function is None:
            return tool_failed(f"no tool named {name!r}")
        try:
            if inspect.iscoroutinefunction(function):
                value = await function(**arguments)
            else:
                value = await asyncio.to_thread(function, **arguments)
                if inspect.isawaitable(value):
                    value = await value
        except Exception as exc:  # the tool's own failure, shown to the model with its type
            return tool_failed(f"{type(exc).__name__}: {exc}")
        return ToolResult(as_text(value))

    async def aclose(self) -> None:
        """Nothing to release."""
