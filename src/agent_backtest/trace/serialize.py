"""How records are written: compact JSON lines, and canonical JSON for hashing."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from pydantic import BaseModel


def dump_record(record: BaseModel) -> bytes:
    """One record as a compact JSON line (no newline), fields that are None left out."""
    # The model's serialiser gives the bytes themselves: model_dump_json's str would be
    # encoded again, a fifth of the time of every record written.
    return record.__pydantic_serializer__.to_json(record, by_alias=True, exclude_none=True)


def canonical_json(value: Any) -> bytes:
    """Canonical JSON (sorted keys, compact separators) of plain data or a model."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def sha256_of(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of a value."""
    return sha256_of_bytes(canonical_json(value))


def sha256_of_bytes(data: bytes) -> str:
    """``sha256:<hex>`` of bytes already serialised (a canonical JSON body, say)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()
