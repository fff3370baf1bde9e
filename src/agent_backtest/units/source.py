"""The units of a run's inputs: a units file (its kinds recomputed when router rules are given),
or traces in any format made into units, counted per input as they pass so a caller can say
what the readers could not use."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path

from agent_backtest.formats import InputSummary, ReadOptions, SessionStream
from agent_backtest.formats.registry import local_input
from agent_backtest.redaction import drop_secret_fields
from agent_backtest.trace import Session
from agent_backtest.units.agent_config import AgentConfig
from agent_backtest.units.build import UnitSkip, reclassify, step_verdicts, units_from_session
from agent_backtest.units.io import is_units_file, read_unit_lines
from agent_backtest.units.model import Unit


class UnitSource:
    """Iterates the units of ``inputs`` once; the counts fill in as it goes."""

    def __init__(
        self,
        inputs: Sequence[Path],
        options: ReadOptions | None = None,
        agent: AgentConfig | None = None,
        format: str | None = None,
    ) -> None:
        self.inputs = [local_input(path) for path in inputs]  # a pipe is read once, here
        self.options = options or ReadOptions()
        self.agent = agent or AgentConfig()
        self.format = format
        self.from_units_file = len(self.inputs) == 1 and is_units_file(self.inputs[0])
        self.stream: SessionStream | None = None
        self.units: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.skips: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.secret_fields_dropped: Counter[str] = Counter()
        """Request fields of a units file's units that held credentials, dropped, by path."""
        self.verbatim_line: bytes | None = None
        """The units file's line the unit just yielded was read from, while the unit is exactly
        as that line writes it; None for units made from traces or changed on the way."""

    def __iter__(self) -> Iterator[Unit]:
        if self.from_units_file:
            file = str(self.inputs[0])
            for unit in reclassify(self._units_with_lines(), self.agent):
                # a units file written elsewhere is held to the rule traces are read by
                dropped = drop_secret_fields(unit.request.params)
                for path in dropped:
                    self.secret_fields_dropped[path] += 1
                if dropped or self.reclassified:
                    self.verbatim_line = None
                self.units[file][unit.kind] += 1
                yield unit
            return
        self.stream = SessionStream(self.inputs, self.options, format=self.format)
        for session in self.stream:
            yield from self.units_of(self.stream.summaries[-1].file, session)

    def _units_with_lines(self) -> Iterator[Unit]:
        """The units of the units file, each with :attr:`verbatim_line` set to its line."""
        for line, unit in read_unit_lines(self.inputs[0]):
            self.verbatim_line = line
            yield unit

    def units_of(self, file: str, session: Session) -> Iterator[Unit]:
        """The units of one session of ``file``, counted as they pass."""
        for item in units_from_session(session, self.agent):
            if isinstance(item, UnitSkip):
                self.skips[file][item.reason] += 1
            else:
                self.units[file][item.kind] += 1
                yield item

    def count_units_of(self, file: str, session: Session) -> None:
        """Count the units of one session of ``file`` as :meth:`units_of` would, without
        making them."""
        for _, _, verdict in step_verdicts(session, self.agent):
            if isinstance(verdict, UnitSkip):
                self.skips[file][verdict.reason] += 1
            else:
                self.units[file][verdict] += 1

    @property
    def reclassified(self) -> bool:
        """True when units read back from a units file get their kind from the given rules."""
        return self.from_units_file and self.agent.sets_router_rules()

    @property
    def summaries(self) -> list[InputSummary]:
        """What each trace input gave so far (none for a units file)."""
        return self.stream.summaries if self.stream is not None else []

    def for_input(self, summary: InputSummary) -> tuple[Counter[str], Counter[str]]:
        """(units by kind, LLM steps that gave no unit by reason) of one input."""
        return self.units[summary.file], self.skips[summary.file]

    def skipped_steps(self) -> Counter[str]:
        """LLM steps of every input that gave no unit, by reason."""
        return sum(self.skips.values(), Counter())

    def skipped_records(self) -> Counter[str]:
        """Records of every input that the readers skipped, by reason."""
        return sum((summary.skips.counts for summary in self.summaries), Counter())

    def sessions(self) -> int:
        """Sessions read from the trace inputs."""
        return sum(summary.sessions for summary in self.summaries)

    def duplicate_sessions(self) -> int:
        """Sessions read twice across the inputs (kept once)."""
        return sum(summary.duplicate_sessions for summary in self.summaries)
