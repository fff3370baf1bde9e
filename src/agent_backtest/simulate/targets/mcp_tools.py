"""The tools of an MCP server started over stdio, as the built-in agent loop's tool environment.

One server per run, shared by its conversations (an MCP session takes concurrent calls). It is
started before the first conversation, listed (its tools, converted to OpenAI function
definitions, are what the model is offered unless the target file names them), and stopped
after the last. The ``mcp`` SDK is an optional extra, imported only here.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import shutil
from pathlib import Path
from typing import Any

from agent_backtest.episodes.agent_loop import ToolResult, tool_failed
from agent_backtest.errors import InputError
from agent_backtest.simulate.targets.config import McpServer
from agent_backtest.simulate.targets.tools import as_text
from agent_backtest.trace import ToolDef

KEY = "tools.mcp"
START_SECONDS = 30.0
"""How long a server may take to start and list its tools."""


def check_server(server: McpServer, file: Path) -> None:
    """What can be known before starting it: the SDK is installed and the command exists."""
    if importlib.util.find_spec("mcp") is None:
        raise InputError(
            file, KEY, "MCP tools need the mcp package: pip install 'agent-backtest[mcp]'"
        )
    if server.cwd is not None and not _folder(server, file).is_dir():
        raise InputError(file, f"{KEY}.cwd", f"no such folder: {server.cwd}")
    if executable(server, file) is None:
        raise InputError(
            file,
            f"{KEY}.command",
            f"cannot find {server.command!r}: install it, or give its path",
        )


def list_server_tools(server: McpServer, file: Path) -> list[ToolDef]:
    """Start the server, list its tools and stop it: a server that cannot start, or lacks a
    tool the file offers, stops the run before anything is written."""

    async def probe() -> list[ToolDef]:
        tools = McpTools(server, file)
        try:
            return await tools.start()
        finally:
            await tools.aclose()

    return asyncio.run(probe())


def executable(server: McpServer, file: Path) -> str | None:
    """The program to run: a path (relative to the server's folder), or found on PATH."""
    if "/" not in server.command:
        return shutil.which(server.command)
    return shutil.which(str(_folder(server, file) / server.command))


def _folder(server: McpServer, file: Path) -> Path:
    """The server's working folder: ``cwd`` relative to the target file, else the file's."""
    return (file.parent / (server.cwd or ".")).resolve()


class McpTools:
    """The server's session, opened by ``start`` and closed by ``aclose`` (in the same task)."""

    def __init__(self, server: McpServer, file: Path) -> None:
        self.server = server
        self.file = file
        self._stack = contextlib.AsyncExitStack()
        self._session: Any = None

    async def start(self) -> list[ToolDef]:
        """Start the server, initialise the session, and list its tools."""
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        parameters = StdioServerParameters(
            command=executable(self.server, self.file) or self.server.command,
            args=self.server.args,
            env=self.server.env or None,
            cwd=_folder(self.server, self.file),
        )
        try:
            async with asyncio.timeout(START_SECONDS):
                read, write = await self._stack.enter_async_context(stdio_client(parameters))
                self._session = await self._stack.enter_async_context(ClientSession(read, write))
                await self._session.initialize()
                listed = await self._session.list_tools()
        except TimeoutError:
            await self.aclose()
            raise InputError(
                self.file, KEY, f"the MCP server did not list its tools within {START_SECONDS:g} s"
            ) from None
        except asyncio.CancelledError:
            # A server gone at once fails the stdio client's own tasks (writing to a closed
            # pipe), which reaches this task as a cancellation: closing raises that failure.
            # A cancellation from outside closes quietly and goes on.
            try:
                await self.aclose()
            except Exception as exc:
                raise self._not_started(exc) from None
            raise
        except Exception as exc:  # the server's own failure to start, in its words
            await self.aclose()
            raise self._not_started(exc) from None
        return [
            ToolDef(name=tool.name, description=tool.description, parameters=tool.inputSchema)
            for tool in listed.tools
        ]

    def _not_started(self, exc: BaseException) -> InputError:
        """The target file's error for a server that failed to start with ``exc`` (the first
        failure of a group, and the cause of a failure that says nothing itself)."""
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        if not str(exc) and exc.__cause__ is not None:
            exc = exc.__cause__
        return InputError(
            self.file, KEY, f"the MCP server did not start: {type(exc).__name__}: {exc}"
        )

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """One ``tools/call``; a result the server marks as an error is the tool's error."""
        try:
            result = await self._session.call_tool(name, arguments)
        except Exception as exc:  # a protocol error (unknown tool, server gone): the call's
            return tool_failed(f"{type(exc).__name__}: {exc}")
        text = "\n".join(_part_text(part) for part in result.content)
        if not text and result.structuredContent is not None:
            text = as_text(result.structuredContent)
        if result.isError:
            return tool_failed(text or "the MCP tool reported an error")
        return ToolResult(text)

    async def aclose(self) -> None:
        """Close the session and stop the server."""
        self._session = None
        await self._stack.aclose()


def _part_text(part: Any) -> str:
    """A content part as text: its text, else the part as JSON (an image, a resource…)."""
    text = getattr(part, "text", None)
    if isinstance(text, str):
        return text
    return as_text(part.model_dump(mode="json", exclude_none=True))
