"""BFCL's function documents as tools in the OpenAI function format.

BFCL writes parameter types the way Python and Java name them (``dict``, ``float``, ``tuple``);
the chat APIs take JSON Schema types, so each is mapped to its JSON Schema name, as the
leaderboard does for models called with native tools. Function names may hold dots
(``math.factorial``), which the APIs refuse: the dots become underscores, in the tools and the
answer keys alike.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["openai_tools", "tool_name"]

JSON_SCHEMA_TYPE = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "list": "array",
    "bool": "boolean",
    "any": "string",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "double": "number",
    "char": "string",
}


def tool_name(name: str) -> str:
    """The function's name as the APIs take it."""
    return name.replace(".", "_")


def openai_tools(functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The functions as OpenAI tools, their schemas in JSON Schema types."""
    tools = []
    for function in functions:
        parameters = _json_schema(copy.deepcopy(function.get("parameters", {})))
        parameters["type"] = "object"
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": tool_name(function["name"]),
                    "description": function.get("description", ""),
                    "parameters": parameters,
                },
            }
        )
    return tools


def _json_schema(schema: Any) -> Any:
    """A schema with every BFCL type renamed, through properties and items."""
    if isinstance(schema, dict):
        if isinstance(schema.get("type"), str):
            schema["type"] = JSON_SCHEMA_TYPE.get(schema["type"], schema["type"])
        for key in ("properties",):
            if isinstance(schema.get(key), dict):
                schema[key] = {name: _json_schema(sub) for name, sub in schema[key].items()}
        if "items" in schema:
            schema["items"] = _json_schema(schema["items"])
    return schema
