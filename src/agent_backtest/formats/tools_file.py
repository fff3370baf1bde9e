"""Tool definitions from a JSON file (``--tools``), for traces that did not record them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_backtest.errors import InputError, RecordError
from agent_backtest.input_files import load_json
from agent_backtest.trace import ToolDef
from agent_backtest.trace.openai_wire import tool_def_from_openai


def load_tools_file(path: Path) -> list[ToolDef]:
    """Tool definitions in OpenAI function format from a JSON file (``--tools``)."""
    data = load_json(path, "tools file")
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
            tool = tool_def_from_openai(raw)
        except RecordError as exc:
            raise InputError(path, f"$[{index}]", exc.detail) from None
        problem = schema_problem(tool.parameters)
        if problem is not None:
            raise InputError(path, f"$[{index}]", f"parameters of {tool.name!r}: {problem}")
        tools.append(tool)
    return tools


def schema_problem(schema: dict[str, Any] | None) -> str | None:
    """Why ``schema`` is not a JSON Schema (``required: 1.5``, ``properties: []``), or None:
    what uses a tool's parameters (prompts, matchers, audits) relies on their shape."""
    if schema is None:
        return None
    from jsonschema import exceptions, validators  # imported here: it costs ~100 ms

    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as exc:
        where = "".join(f"[{part!r}]" for part in exc.absolute_path)
        return f"not a JSON Schema: {where + ' ' if where else ''}{exc.message}"
    return None
