"""The two bases of every record abt writes or reads: strict fields, and a schema tag.

Every file abt writes (run.json, results.jsonl, verdicts, episodes, summaries, …) is a pydantic
model that refuses unknown fields, so a misspelt key in a hand-edited or foreign file is an error
that names it rather than a value silently dropped. Records that stand alone in a file also carry
a version tag under the key ``schema`` (``"abt.result/1"``); Python cannot name a field
``schema`` on a pydantic model, so it is ``schema_`` with an alias, and both spellings are
accepted when reading.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class StrictModel(BaseModel):
    """A record whose unknown fields are an error."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class TaggedRecord(BaseModel):
    """A strict record that carries its schema tag as ``schema`` (declare ``schema_`` with
    :func:`schema_tag`)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


def schema_tag(tag: str) -> Any:
    """The ``schema_`` field of a :class:`TaggedRecord`: ``tag`` by default, written ``schema``."""
    return Field(default=tag, alias="schema")
