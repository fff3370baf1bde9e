"""A real MCP server over stdio for the model target's tests (run as a script by the target).

Every call is appended to the file named by ``MCP_CALLS``, so a test sees what reached it.
"""

from __future__ import annotations

import json
import os

from mcp.server.fastmcp import FastMCP

server = FastMCP("notes")


def _log(name: str, arguments: dict) -> None:
    with open(os.environ["MCP_CALLS"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"tool": name, "arguments": arguments}) + "\n")


@server.tool()
def add_note(text: str) -> str:
    """Save a note."""
    _log("add_note", {"text": text})
    return f"saved note: {text}"


@server.tool()
def check_store(reason: str) -> str:
    """Check the notes store."""
    _log("check_store", {"reason": reason})
    raise ValueError(f"the notes store is down ({reason})")


if __name__ == "__main__":
    server.run()
