"""What the end of a judging leaves beside the verdicts: the run's findings ledger (and the
team's, once per run) and its coverage manifest."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from agent_backtest.errors import InputError, UserError
from agent_backtest.input_files import iter_lines
from agent_backtest.simulate.coverage import coverage
from agent_backtest.simulate.layout import CONVERSATIONS, COVERAGE, FLOWS, LEDGER, MANIFEST
from agent_backtest.simulate.ledger import RunFindings, append_once, write_run_ledger
from agent_backtest.simulate.manifest import SimulateManifest
from agent_backtest.simulate.models import Flow, Verdict


@dataclass(frozen=True)
class Findings:
    """Where the findings were written, and whether the team ledger got the run now."""

    ledger: Path
    coverage: Path
    appended_to: Path | None


def write_findings(run: Path, flows: list[Flow], verdicts: list[Verdict]) -> Findings:
    """``ledger.md`` and ``coverage.json`` of the run's verdicts; when every flow has one and
    run.json names a team ledger, the run's section appended to it (once per run)."""
    manifest = _manifest(run / MANIFEST)
    by_flow = {verdict.flow_id: verdict for verdict in verdicts}
    findings = RunFindings(run, manifest, flows, by_flow, _lines(run / CONVERSATIONS))
    ledger = write_run_ledger(findings)
    covered = coverage([run / FLOWS], flows, [findings])
    covered.save(run / COVERAGE)
    appended = None
    complete = all(flow.id in by_flow for flow in flows)
    if complete and manifest is not None and manifest.ledger is not None:
        appended = _append(findings, Path(manifest.ledger))
    return Findings(ledger, run / COVERAGE, appended)


def _append(findings: RunFindings, team: Path) -> Path | None:
    """The team ledger, if the run's section was appended to it now."""
    try:
        return team if append_once(findings, team) else None
    except OSError as exc:  # checked before the run, but it may have changed since
        raise UserError(
            f"cannot append to {team} ({exc.strerror}); the verdicts and {LEDGER} are written, "
            "and the next judging of the run appends it",
            "ledger",
        ) from None


def _manifest(path: Path) -> SimulateManifest | None:
    """run.json, or None for a run directory that has none (judged from its files alone)."""
    if not path.is_file():
        return None
    try:
        return SimulateManifest.load(path)
    except ValueError:
        raise InputError(path, None, "not the manifest of a simulate run") from None


def _lines(path: Path) -> dict[str, int]:
    """Each flow's line in conversations.jsonl (its first whole record, the one judged)."""
    lines: dict[str, int] = {}
    if not path.exists():
        return lines
    for number, line in iter_lines(path, "run file"):
        try:
            lines.setdefault(orjson.loads(line)["flow_id"], number)
        except (orjson.JSONDecodeError, KeyError, TypeError):
            continue  # a blank or torn line
    return lines
