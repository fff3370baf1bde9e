"""JSON documents of a run (summary, comparison, profile): one typed record per file.

Written with sorted keys and a fixed indent, so the same record is always the same bytes; read
back strictly, so a file from another version or another tool is refused with what to do.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from agent_backtest.errors import InputError
from agent_backtest.input_files import read_bytes
from agent_backtest.record_model import StrictModel
from agent_backtest.runs.files import private_atomic_writer

Record = TypeVar("Record", bound=BaseModel)


class DocumentPart(StrictModel):
    """A part of a document: unknown fields are refused, so a misread file fails loudly."""


def document_bytes(record: BaseModel) -> bytes:
    """A record as its file holds it: indented JSON with sorted keys, and a final newline."""
    data = record.model_dump(mode="json", by_alias=True)
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def write_document(path: Path, record: BaseModel) -> None:
    """Write a record atomically (mode 0600)."""
    with private_atomic_writer(path) as handle:
        handle.write(document_bytes(record))


def read_document(path: Path, model: type[Record], what: str, remedy: str) -> Record:
    """The record in ``path``; a file that is not one is an InputError ending with ``remedy``."""
    data = read_bytes(path, what)
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"]) or "the document"
        raise InputError(
            path,
            None,
            f"not a {what} this version of abt reads ({where}: {error['msg']}); {remedy}",
        ) from None
