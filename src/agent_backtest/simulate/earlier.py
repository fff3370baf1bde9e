"""Earlier simulate runs read back for what they decided: each flow as played, with its verdict,
and the target it was played through. Selection (``--from``, ``--exclude-judged``) and the
coverage manifest read runs through here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from agent_backtest.errors import InputError, UserError
from agent_backtest.simulate.coverage import JudgedRun, seed_of
from agent_backtest.simulate.flows import LocatedFlow, read_flows
from agent_backtest.simulate.judging import read_verdicts
from agent_backtest.simulate.layout import FLOWS, MANIFEST, VERDICTS
from agent_backtest.simulate.manifest import SimulateManifest
from agent_backtest.simulate.models import Verdict


@dataclass(frozen=True)
class EarlierRun:
    """A simulate run that has verdicts: its manifest, its flows as played and their verdicts."""

    path: Path
    manifest: SimulateManifest
    flows: list[LocatedFlow]
    verdicts: dict[str, Verdict]

    def same_target(self, name: str, sha256: str) -> bool:
        """True when the run played through the target of this name and this file content."""
        target = self.manifest.target
        return target.name == name and target.file.sha256 == sha256

    def judged(self) -> JudgedRun:
        """What the coverage manifest reads of the run."""
        flows = [located.flow for located in self.flows]
        return JudgedRun(self.path, self.manifest, flows, self.verdicts)

    def decided(self) -> dict[str, Verdict]:
        """The pass and fail verdicts of the run, by seed (``seed_id``, else the flow's id)."""
        return {
            seed_of(located.flow): verdict
            for located in self.flows
            if (verdict := self.verdicts.get(located.flow.id)) and verdict.verdict != "uncertain"
        }


def read_earlier(run: Path, parameter: str) -> EarlierRun:
    """The simulate run in ``run``, which must have verdicts; anything else is a user error
    naming ``parameter``."""
    if not run.is_dir():
        raise UserError(f"{run} is not a run directory", parameter)
    manifest = _manifest(run, parameter)
    if not (run / FLOWS).is_file():
        raise InputError(run / FLOWS, None, "missing: the run's flows as played are kept here")
    flows = read_flows(run / FLOWS)
    verdicts = read_verdicts(run / VERDICTS)
    if not verdicts:
        raise UserError(
            f"{run} has no verdicts yet: judge it first (abt simulate judge {run})", parameter
        )
    return EarlierRun(run, manifest, flows, verdicts)


def runs_under(paths: Sequence[Path], parameter: str) -> list[EarlierRun]:
    """The runs named: each path is a simulate run with verdicts, or a folder of runs (its
    subfolders that hold a judged simulate run; others, such as replay runs, are passed over)."""
    found: list[EarlierRun] = []
    for path in paths:
        if (path / MANIFEST).exists() or not path.is_dir():
            found.append(read_earlier(path, parameter))
            continue
        inside = [sub for sub in sorted(path.iterdir()) if _judged_simulate_run(sub)]
        if not inside:
            raise UserError(
                f"{path} is neither a simulate run nor a folder holding judged simulate runs",
                parameter,
            )
        found.extend(read_earlier(sub, parameter) for sub in inside)
    return found


def _judged_simulate_run(path: Path) -> bool:
    """True for a simulate run with at least one verdict (a folder may hold other runs)."""
    if not (path / MANIFEST).is_file():
        return False
    try:
        SimulateManifest.load(path / MANIFEST)
    except ValueError:
        return False
    return bool(read_verdicts(path / VERDICTS))


def _manifest(run: Path, parameter: str) -> SimulateManifest:
    path = run / MANIFEST
    if not path.is_file():
        raise UserError(f"{run} holds no simulate run (no {MANIFEST})", parameter)
    try:
        return SimulateManifest.load(path)
    except (ValidationError, ValueError):
        raise InputError(path, None, "not the manifest of a simulate run") from None
