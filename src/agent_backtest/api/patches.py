"""``check_patch()``: what a patch would change in a set of units, before a replay sends them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_backtest.api.options import AgentOptions, PathLike, ReadingOptions, SelectionOptions
from agent_backtest.api.units import build_units
from agent_backtest.errors import InputError
from agent_backtest.patch import CoverageReport, PatchCoverage, load_patch, request_diff
from agent_backtest.runs import describe_input

__all__ = ["CoverageReport", "PatchCheck", "check_patch"]


@dataclass(frozen=True)
class PatchCheck:
    """A patch applied to units with nothing sent: per op, the units it reached and changed."""

    report: CoverageReport
    """What patch_coverage.json holds: every op's scope, target and changes, and its status."""
    coverage: PatchCoverage

    def diffs(self) -> dict[str, str]:
        """The first request each op changed, before and after, as a unified diff, by op."""
        return {
            op_id: request_diff(op_id, example)
            for op_id, example in self.coverage.examples().items()
        }


def check_patch(
    patch_file: PathLike,
    inputs: PathLike | Sequence[PathLike],
    *,
    reading: ReadingOptions | None = None,
    agent: AgentOptions | None = None,
    selection: SelectionOptions | None = None,
) -> PatchCheck:
    """Apply the patch in ``patch_file`` to the selected units of ``inputs`` (trace files or a
    units JSONL) and report, per op, how many units have its target and how many it changed.

    A patch file that cannot be read, or inputs that give no unit, fail with the file named.
    """
    path = Path(patch_file)
    patch = load_patch(path)
    units = build_units(inputs, reading=reading, agent=agent, selection=selection)
    coverage = PatchCoverage(patch).add_all(units)
    if coverage.units == 0:
        first = Path(inputs) if isinstance(inputs, str | Path) else Path(inputs[0])
        raise InputError(
            first,
            None,
            "no units to patch (see abt ingest for what the inputs hold, and the selection flags)",
        )
    return PatchCheck(coverage.report(path.name, describe_input(path).sha256), coverage)
