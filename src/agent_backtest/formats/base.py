"""What every reader shares: options, the skip log, and the two kinds of bad input.

A reader turns one input file into canonical sessions. Input it cannot read at all raises
:class:`InputError` (file, location, fix). A single record inside a readable file that cannot be
used (missing or mistyped fields) raises :class:`RecordError` inside the reader, which logs it in
the :class:`SkipLog` under a named reason and goes on, unless ``strict`` is set. A parser
decorated with :func:`validation_errors_as` reports a value of the wrong type that the canonical
model refuses the same way.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import ParamSpec, Protocol, TypeVar

from pydantic import ValidationError

from agent_backtest.errors import InputError, RecordError
from agent_backtest.trace import Session, ToolDef

DUPLICATE = "duplicate_span"

Params = ParamSpec("Params")
Parsed = TypeVar("Parsed")


@dataclass
class ReadOptions:
    """Reading options that apply to every format."""

    tools: list[ToolDef] | None = None
    """Tool definitions for inputs that did not record them (``--tools``)."""
    recorded_model: str | None = None
    """The model that answered, for formats that do not record it (``--recorded-model``)."""
    strict: bool = False
    """Turn every skip into an error (``--strict``)."""
    explain: bool = False
    """Keep a reading of every span or observation (``abt show --explain``)."""


@dataclass
class Skip:
    """One skipped record, kept as an example for the report."""

    reason: str
    location: str
    detail: str


@dataclass
class SpanReading:
    """How one span or observation was read: the step it became, or why it became none."""

    location: str
    span_id: str
    name: str
    kind: str
    """The step kind it became (``llm``, ``tool``, ``agent``, ``other``), or ``none``."""
    dialect: str | None
    """The dialect that read its call or tool execution, if any."""
    reason: str | None = None
    """Why it gave no step or no usable call: a named reason."""
    detail: str | None = None
    found: list[str] = field(default_factory=list)
    """For an LLM span, what each dialect that recognised it found, in the order they are asked."""


@dataclass
class SkipLog:
    """Counts skipped records by reason for one input file; keeps the first few of each."""

    file: str
    strict: bool = False
    counts: Counter[str] = field(default_factory=Counter)
    examples: list[Skip] = field(default_factory=list)
    examples_per_reason: int = 3
    readings: list[SpanReading] | None = None
    """Every span's reading, kept only when asked for (``explain``)."""

    def skip(self, reason: str, location: str, detail: str) -> None:
        """Record a skip, or raise :class:`InputError` in strict mode."""
        if self.strict:
            raise InputError(self.file, location, f"{reason}: {detail} (drop --strict to skip it)")
        self.counts[reason] += 1
        if self.counts[reason] <= self.examples_per_reason:
            self.examples.append(Skip(reason, location, detail))
        self.read(SpanReading(location, "", "", "none", None, reason, detail))

    def drop_duplicate(self, location: str, detail: str) -> None:
        """Count a record dropped as an exact repeat of one already read (never an error)."""
        self.counts[DUPLICATE] += 1
        if self.counts[DUPLICATE] <= self.examples_per_reason:
            self.examples.append(Skip(DUPLICATE, location, detail))
        self.read(SpanReading(location, "", "", "none", None, DUPLICATE, detail))

    def read(self, reading: SpanReading) -> None:
        """Keep a span's reading when readings are asked for."""
        if self.readings is not None:
            self.readings.append(reading)

    def record_error(self, error: RecordError, location: str) -> None:
        """Log a :class:`RecordError` raised while reading the record at ``location``."""
        self.skip(error.reason, location, error.detail)


class Reader(Protocol):
    """The interface of a reader module (one per format in ``agent_backtest.formats``)."""

    FORMAT: str

    def sniff(self, head: str, path: Path) -> bool:
        """True when ``head`` (the start of the file, as text) looks like this format."""
        ...

    def read(self, path: Path, options: ReadOptions, skips: SkipLog) -> Iterator[Session]:
        """Yield the file's sessions in order, logging unusable records in ``skips``."""
        ...


def first_validation_error(exc: ValidationError) -> str:
    """The first validation problem as ``path: message`` (pydantic lists them all)."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "$"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {error['msg']}{more}"


def validation_errors_as(
    reason: str,
) -> Callable[[Callable[Params, Parsed]], Callable[Params, Parsed]]:
    """Make a record parser raise :class:`RecordError` under ``reason`` for a value of the wrong
    type deep inside the record, which the canonical model's validation finds (a body, a step)."""

    def decorate(parse: Callable[Params, Parsed]) -> Callable[Params, Parsed]:
        @functools.wraps(parse)
        def parse_record(*args: Params.args, **kwargs: Params.kwargs) -> Parsed:
            try:
                return parse(*args, **kwargs)
            except ValidationError as exc:
                raise RecordError(reason, first_validation_error(exc)) from None

        return parse_record

    return decorate
