"""A gold file checked against the units it names, before a replay or a scoring spends anything.

An agent config's ``answer_keys`` gold file (see :mod:`agent_backtest.units.answer_key`) fills
the answer key of each unit it names that has none of its own. Two mistakes in it would
otherwise surface only while scoring, after the calls were paid for: a line naming a unit that
is not there (a typo, or the gold file of other traces), and a key that does not fit its unit
(other calls than the golden's, or a required parameter left out). :class:`GoldCheck` finds both
as the units stream past, so the plan that reads them can refuse the file first.

A key that does not fit its unit is one no answer can satisfy: that unit alone is left out,
under the reason ``unsatisfiable_key`` with its line and why, and every other unit is replayed
and scored. In strict mode (``--strict``) such a key stops everything, before anything is paid.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from agent_backtest.errors import InputError
from agent_backtest.units.answer_key import read_answer_keys
from agent_backtest.units.model import Unit, key_mismatch

UNSATISFIABLE = "unsatisfiable_key"
"""The reason a unit whose gold key no answer can satisfy is left out under."""


class GoldCheck:
    """The keys of one gold file, checked against every unit that passes :meth:`watch`."""

    def __init__(self, path: Path, strict: bool = False) -> None:
        """Read the gold file (a line that is not a key is an error naming its line);
        ``strict``: a key that does not fit its unit is an error, not a unit left out."""
        self.path = path
        self.strict = strict
        self.keys = read_answer_keys(path)
        self.met: set[str] = set()
        self.unusable: dict[str, str] = {}
        """Units whose key does not fit them, with the line and why: left out."""

    def watch(self, units: Iterable[Unit]) -> Iterator[Unit]:
        """The units whose key (if any) fits them, unchanged, each checked on the way."""
        for unit in units:
            if self.check(unit):
                yield unit

    def check(self, unit: Unit) -> bool:
        """Whether the key of ``unit`` fits it (a unit's own key wins over the gold file's, so
        a gold line for such a unit is never used and not checked). One that does not is noted
        in :attr:`unusable`, or refused when strict."""
        found = self.keys.get(unit.unit_id)
        if found is None:
            return True
        self.met.add(unit.unit_id)
        line, key = found
        problem = None if unit.answer_key is not None else key_mismatch(unit, key)
        if not problem:
            return True
        if self.strict:
            raise InputError(self.path, f"line {line}", problem)
        self.unusable[unit.unit_id] = f"line {line}: {problem}"
        return False

    def warning(self) -> str | None:
        """One line naming the units left out for their keys, or None when there are none."""
        if not self.unusable:
            return None
        shown = list(self.unusable.items())[:3]
        named = "; ".join(f"unit {unit_id} ({why})" for unit_id, why in shown)
        more = f"; and {len(self.unusable) - len(shown)} more" if len(self.unusable) > 3 else ""
        return (
            f"{self.path}: {UNSATISFIABLE}: {len(self.unusable)} unit(s) left out, their key "
            f"fitting no answer: {named}{more} (--strict stops instead)"
        )

    def finish(self, where: str) -> None:
        """Refuse the first line whose unit never passed; ``where`` names what was read."""
        unmet = sorted(
            (line, unit_id) for unit_id, (line, _) in self.keys.items() if unit_id not in self.met
        )
        if not unmet:
            return
        line, unit_id = unmet[0]
        more = f" (nor are those of {len(unmet) - 1} more lines)" if len(unmet) > 1 else ""
        raise InputError(
            self.path,
            f"line {line}",
            f"unit {unit_id} is not among {where}{more}: name each unit by the unit_id that "
            "abt units prints, or remove the line",
        )
