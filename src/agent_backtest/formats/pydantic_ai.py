"""Pydantic AI's own span attributes (through Logfire): the tools a model request offered.

Pydantic AI records the conversation in the GenAI forms (events before 1.0, messages since),
which the GenAI dialects read. The tools are its own: ``model_request_parameters`` holds
``function_tools`` (the agent's tools) and ``output_tools`` (the structured-output tool such as
``final_result``), each with its schema under ``parameters_json_schema``; both were offered.
"""

from __future__ import annotations

from typing import Any

from agent_backtest.errors import RecordError
from agent_backtest.formats.messages import decoded
from agent_backtest.trace import ToolDef
from agent_backtest.trace.openai_wire import tool_def_from_openai

PARAMETERS_KEY = "model_request_parameters"


def tools(attributes: dict[str, Any]) -> list[ToolDef] | None:
    """The function and output tools of ``model_request_parameters``; None when not recorded."""
    value = decoded(attributes.get(PARAMETERS_KEY))
    if not isinstance(value, dict) or "function_tools" not in value:
        return None
    found = []
    for key in ("function_tools", "output_tools"):
        listed = value.get(key) or []
        if not isinstance(listed, list):
            raise RecordError("malformed_tool_definition", f"{PARAMETERS_KEY}.{key} is not a list")
        found.extend(tool_def_from_openai(tool) for tool in listed)
    return found
