"""Tool definitions from a JSON file (``--tools``), for traces that did not record them."""

from __future__ import annotations

from pathlib import Path

from agent_backtest.errors import InputError, RecordError
from agent_backtest.formats.jsonio import load_json
from agent_backtest.trace import ToolDef
from agent_backtest.trace.openai_wire import tool_def_from_openai


def load_tools_file(path: Path) -> list[ToolDef]:
    """Tool definitions in OpenAI function format from a JSON file (``--tools``)."""
    data = load_json(path)
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if not isinstance(data, list):
        raise InputError(
            path,
            "$",
            "expected a JSON list of tool definitions "
            '(OpenAI function format: [{"type": "function", "function": {...}}])',
        )
    tools = []
    for index, raw in enumerate(data):
        try:
            tools.append(tool_def_from_openai(raw))
        except RecordError as exc:
            raise InputError(path, f"$[{index}]", exc.detail) from None
    return tools
