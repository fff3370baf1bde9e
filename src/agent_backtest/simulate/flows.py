"""Reading a flows file: JSON Lines, JSON (a list, or an object holding ``flows``) or YAML.

Every flow is read with the line it starts on, so a mistake is reported as the file, the line
and the field at fault. Ids are sanitised as they are read (``models.sanitise_id``); two flows
whose ids become the same are refused with both lines named, since their records would mix.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from agent_backtest.errors import InputError
from agent_backtest.formats.jsonio import is_json_lines, iter_json_lines, load_json
from agent_backtest.input_files import compose_yaml, decode_text, read_bytes
from agent_backtest.simulate.models import Flow

YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class LocatedFlow:
    """A flow and the line of its file it starts on."""

    flow: Flow
    line: int


def read_flows(path: Path) -> list[LocatedFlow]:
    """Every flow of ``path`` in file order; any mistake is an :class:`InputError` naming the
    line and the field."""
    text = decode_text(read_bytes(path, "flows file"), path, "flows file")
    if not text.strip():
        raise InputError(path, None, "holds no flows: write one flow per line (JSONL)")
    if path.suffix.lower() in YAML_SUFFIXES:
        rows = _yaml_rows(path, text)
    elif is_json_lines(path):
        rows = list(iter_json_lines(path))
        if len(rows) == 1 and _is_document(rows[0][1]):  # a whole document on one line
            rows = _json_rows(path, text)
    else:
        rows = _json_rows(path, text)
    flows = [LocatedFlow(_flow(path, line, row), line) for line, row in rows]
    _refuse_duplicates(path, flows)
    if not flows:
        raise InputError(path, None, "holds no flows: write one flow per line (JSONL)")
    return flows


def _is_document(value: Any) -> bool:
    """True for a list of flows or an object holding ``flows`` (not a line of one flow)."""
    return isinstance(value, list) or (isinstance(value, dict) and "flows" in value)


def _flow(path: Path, line: int, row: Any) -> Flow:
    """One flow, or the error naming its line and the field at fault."""
    if not isinstance(row, dict):
        raise InputError(path, f"line {line}", "a flow must be an object with id and family")
    try:
        flow = Flow.model_validate(row)
    except ValidationError as exc:
        error = exc.errors()[0]
        message = error["msg"].removeprefix("Value error, ")
        field = ".".join(str(part) for part in error["loc"])
        raise InputError(
            path, f"line {line}", f"{field}: {message}" if field else message
        ) from None
    if flow.seed_id is None:  # a flow written by hand is its own origin
        flow.seed_id = flow.id
    return flow


def _refuse_duplicates(path: Path, flows: list[LocatedFlow]) -> None:
    seen: dict[str, int] = {}
    for located in flows:
        first = seen.setdefault(located.flow.id, located.line)
        if first != located.line:
            raise InputError(
                path,
                f"line {located.line}",
                f"flow id {located.flow.id!r} is also the id of the flow on line {first} (ids "
                "keep letters, digits, _ and -, other characters become -): rename one",
            )


def _json_rows(path: Path, text: str) -> list[tuple[int, Any]]:
    """The flows of a JSON document (``text`` is the file's) with the line each one starts
    on."""
    document = load_json(path)
    if isinstance(document, dict):
        flows = document.get("flows")
        if not isinstance(flows, list):
            raise InputError(path, "$.flows", "a JSON object must hold a list under 'flows'")
    elif isinstance(document, list):
        flows = document
    else:
        raise InputError(path, "$", 'a JSON flows file is a list of flows or {"flows": [...]}')
    lines = _element_lines(text, isinstance(document, dict))
    return list(zip(lines, flows, strict=True))


def _element_lines(text: str, in_object: bool) -> list[int]:
    """The line each element of the flows list starts on (the document is valid JSON).

    orjson says nothing of where a value sits, so the list is walked with the standard
    decoder's ``raw_decode``, one element at a time.
    """
    decoder = json.JSONDecoder()
    start = _skip(text, 0)
    if in_object:
        start = _value_of_key(text, decoder, start, "flows")
    position, lines = _skip(text, start + 1), []
    while text[position] != "]":
        lines.append(text.count("\n", 0, position) + 1)
        _, end = decoder.raw_decode(text, position)
        position = _skip(text, end)
        if text[position] == ",":
            position = _skip(text, position + 1)
    return lines


def _value_of_key(text: str, decoder: json.JSONDecoder, start: int, wanted: str) -> int:
    """Where the value of the top-level key ``wanted`` starts (the last one, as JSON keeps)."""
    position, found = _skip(text, start + 1), start
    while text[position] != "}":
        key, end = decoder.raw_decode(text, position)
        position = _skip(text, _skip(text, end) + 1)  # past the colon
        if key == wanted:
            found = position
        _, end = decoder.raw_decode(text, position)
        position = _skip(text, end)
        if text[position] == ",":
            position = _skip(text, position + 1)
    return found


def _skip(text: str, position: int) -> int:
    while text[position] in " \t\r\n":
        position += 1
    return position


def _yaml_rows(path: Path, text: str) -> list[tuple[int, Any]]:
    """The flows of a YAML document with the line each one starts on."""
    root, document = compose_yaml(text, path)
    if root is None:
        return []
    sequence, flows = root, document
    if isinstance(root, yaml.MappingNode) and isinstance(document, dict):
        # The last ``flows`` key, as the document's value keeps it.
        sequence = next((v for k, v in reversed(root.value) if k.value == "flows"), None)
        flows = document.get("flows")
    if not isinstance(sequence, yaml.SequenceNode) or not isinstance(flows, list):
        raise InputError(path, "line 1", "a YAML flows file is a list of flows or flows: [...]")
    return [
        (item.start_mark.line + 1, flow) for item, flow in zip(sequence.value, flows, strict=True)
    ]
