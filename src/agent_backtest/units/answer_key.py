"""Answer keys: every acceptable form of a golden tool call, argument by argument.

Production's own call is one right answer; a benchmark (or a person) often knows several
("NYC" and "New York City", a unit that may be left out). An answer key says so, per golden
call: for each argument, the acceptable values and whether leaving it out is acceptable too.

A **gold file** is JSON lines, one unit's key a line, the calls in the golden's order::

    {"unit_id": "u-3f…", "calls": [{"name": "get_weather", "arguments": {
        "city": {"values": ["New York City", "NYC"]},
        "unit": {"values": ["celsius"], "optional": true},
        "window": {"fields": {"start": {"values": ["09:00"]}, "end": {"values": ["17:00"]}}},
        "stops": {"items": [{"values": ["JFK"]}, {"values": ["BOS", "Boston"]}]}}}]}

An argument's key gives ``values`` (each compared with the candidate's value by the matcher's
usual rules), or ``fields`` (an object argument checked field by field, each field a key of its
own), or ``items`` (an array argument checked item by item, in order). ``optional`` adds
leaving the argument out to what is acceptable; with no values, leaving it out is the only
right answer. An argument the key does not list must be left out (or set to its default, or
null where the tool does not require it). A unit's key may also come with the unit itself
(``Unit.answer_key``, as a benchmark writes it); a gold file named by the agent config's
``answer_keys`` fills the units that have none.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agent_backtest.errors import InputError
from agent_backtest.formats.jsonio import iter_json_lines
from agent_backtest.input_files import checked_regular_file

__all__ = ["ArgumentKey", "CallKey", "GoldLine", "read_answer_keys"]


class ArgumentKey(BaseModel):
    """The acceptable forms of one argument: values, or fields, or items; maybe left out."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    values: list[Any] = Field(
        default_factory=list, description="Acceptable values, each compared by the matcher."
    )
    fields: dict[str, ArgumentKey] | None = Field(
        default=None, description="An object argument: the key of each of its fields."
    )
    items: list[ArgumentKey] | None = Field(
        default=None, description="An array argument: the key of each item, in order."
    )
    optional: bool = Field(default=False, description="Leaving the argument out is acceptable.")

    @model_validator(mode="after")
    def _one_form(self) -> ArgumentKey:
        """Exactly one of values, fields and items (or none, when only omission is right)."""
        if self.fields is None and self.items is None and self.values:
            return self  # the usual key: values only (one check, as every argument has a key)
        forms = sum((bool(self.values), self.fields is not None, self.items is not None))
        if forms > 1:
            raise ValueError("give one of values, fields and items")
        if forms == 0 and not self.optional:
            raise ValueError("give values, fields or items, or set optional")
        return self


class CallKey(BaseModel):
    """The answer key of one golden call: its tool and the key of every argument it may have."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="The tool, as production's call names it.")
    arguments: dict[str, ArgumentKey] = Field(default_factory=dict)


class GoldLine(BaseModel):
    """One line of a gold file: the answer key of one unit's golden calls."""

    model_config = ConfigDict(extra="forbid")

    unit_id: str
    calls: list[CallKey]


def read_answer_keys(path: Path) -> dict[str, tuple[int, list[CallKey]]]:
    """The keys of a gold file by unit id, each with its line number (for error messages)."""
    keys: dict[str, tuple[int, list[CallKey]]] = {}
    for number, line in _lines(path):
        if line.unit_id in keys:
            raise InputError(
                path,
                f"line {number}",
                f"unit {line.unit_id} already has a key on line {keys[line.unit_id][0]}; "
                "give each unit one line",
            )
        keys[line.unit_id] = (number, line.calls)
    return keys


def _lines(path: Path) -> Iterator[tuple[int, GoldLine]]:
    """The parsed lines of a gold file, numbered; blank lines skipped."""
    checked_regular_file(path, "gold file")
    for number, value in iter_json_lines(path, expected="one key a line"):
        try:
            line = GoldLine.model_validate(value)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error["loc"]) or "$"
            raise InputError(
                path,
                f"line {number}",
                f"not an answer key at {where}: {error['msg']} "
                '(expected {"unit_id": …, "calls": [{"name": …, "arguments": {…}}]})',
            ) from None
        yield number, line
