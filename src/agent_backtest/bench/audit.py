"""The strict audit of a transcript: every tool call names an offered tool, with valid arguments.

A training example teaches what it shows. A call of a tool that was not offered, or arguments
its JSON Schema refuses, would teach the mistake; the audit finds them so the export can leave
such an episode out, saying why.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from jsonschema import exceptions, validators

from agent_backtest.errors import bounded
from agent_backtest.trace import Message, ToolDef

UNKNOWN_TOOL = "unknown_tool"
INVALID_ARGUMENTS = "invalid_arguments"
INVALID_TOOL_SCHEMA = "invalid_tool_schema"


@dataclass(frozen=True)
class Finding:
    """One tool call the audit refuses: the reason's name and where it is."""

    reason: str
    detail: str


class ToolSchemas:
    """The offered tools' argument validators, each built once."""

    def __init__(self, tools: Sequence[ToolDef] | None) -> None:
        self.schemas = {tool.name: tool.parameters or {} for tool in tools or ()}
        self.validators: dict[str, Any] = {}

    def check(self, name: str, arguments: Any) -> Finding | None:
        """Why a call of ``name`` with ``arguments`` is refused, or None."""
        if name not in self.schemas:
            offered = ", ".join(sorted(self.schemas)) or "none"
            return Finding(UNKNOWN_TOOL, f"{name} is not an offered tool (offered: {offered})")
        try:
            validator = self._validator(name)
        except exceptions.SchemaError as exc:
            return Finding(INVALID_TOOL_SCHEMA, f"the schema of {name} is invalid: {exc.message}")
        error = exceptions.best_match(validator.iter_errors(arguments))
        if error is None:
            return None
        where = "".join(f"[{part!r}]" for part in error.absolute_path) or " (the arguments)"
        return Finding(INVALID_ARGUMENTS, f"{name}{where}: {error.message}")

    def _validator(self, name: str) -> Any:
        if name not in self.validators:
            schema = self.schemas[name]
            self.validators[name] = _validator(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS))
        return self.validators[name]


@functools.lru_cache(maxsize=512)
def _validator(schema: bytes) -> Any:
    """The validator of a schema given as canonical JSON: checking a schema against its
    meta-schema costs far more than validating a call, and every episode offers the same tools."""
    parsed = orjson.loads(schema)
    kind = validators.validator_for(parsed)
    kind.check_schema(parsed)
    return kind(parsed)


def audit(messages: Sequence[Message], tools: Sequence[ToolDef] | None) -> list[Finding]:
    """Every tool call of the transcript's assistant messages that the audit refuses."""
    schemas = ToolSchemas(tools)
    findings = []
    for position, message in enumerate(messages):
        if message.role != "assistant":
            continue
        for call in message.tool_calls or ():
            if call.arguments_error is not None:
                finding = Finding(
                    INVALID_ARGUMENTS,
                    f"{call.name}: arguments are not JSON ({call.arguments_error})",
                )
            else:
                finding = schemas.check(call.name, call.arguments)
            if finding is not None:
                detail = bounded(f"message {position}: {finding.detail}", 300)
                findings.append(Finding(finding.reason, detail))
    return findings
