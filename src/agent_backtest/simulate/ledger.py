"""The findings ledger: a run's failures in Markdown, grouped by family, owner and failure
category, with counts and a link to a representative conversation; uncertain verdicts apart.

``ledger.md`` in the run directory is the ledger of the run's current verdicts, rewritten after
each judging. A team's running ledger file (``--ledger FILE``) gets the run's section appended
once: the section carries a marker keyed by the run (its creation time), and the append is a
check for that marker and an atomic rewrite under a lock on the ledger's folder, so a resume, a
re-judge or two runs finishing at once never write a run twice.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agent_backtest.errors import UserError
from agent_backtest.runs.files import private_atomic_writer, private_mkdir
from agent_backtest.simulate.coverage import JudgedRun
from agent_backtest.simulate.layout import CONVERSATIONS, LEDGER
from agent_backtest.simulate.models import Flow, Verdict

REPORT_PAGE = "report.html"
EVIDENCE_CHARS = 200


@dataclass(frozen=True)
class FailureGroup:
    """The failures of one family, owner and category; the first flow stands for them."""

    family: str
    owner: str
    category: str
    flows: list[str]


@dataclass(frozen=True)
class RunFindings(JudgedRun):
    """What a ledger section says of a run: the run judged, and where its conversations sit."""

    lines: dict[str, int]
    """Each flow's line in conversations.jsonl."""

    def marker(self) -> str | None:
        """The comment that marks the run's section in a team ledger (None without run.json)."""
        if self.manifest is None:
            return None
        return f"<!-- abt simulate run {self.manifest.created_at.isoformat()} -->"


def check_ledger(path: Path | None) -> None:
    """A team ledger must be a file that can be written (or made in a folder that can be)."""
    if path is None:
        return
    if path.is_dir():
        raise UserError(f"{path} is a folder: name the ledger file (Markdown)", "ledger")
    if path.exists():
        if not os.access(path, os.W_OK):
            raise UserError(f"{path} cannot be written: name a ledger file you can write", "ledger")
        return
    folder = next(p for p in path.absolute().parents if p.exists())
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(
            f"{path} cannot be made in {folder}: name a ledger file elsewhere", "ledger"
        )


def failure_groups(flows: list[Flow], verdicts: dict[str, Verdict]) -> list[FailureGroup]:
    """The failures grouped, the largest group first (then by family, owner, category)."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for flow in flows:
        verdict = verdicts.get(flow.id)
        if verdict is not None and verdict.verdict == "fail":
            key = (flow.family, verdict.owner or "—", verdict.failure_category or "—")
            groups.setdefault(key, []).append(flow.id)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return [FailureGroup(*key, ids) for key, ids in ordered]


def section(findings: RunFindings, links_from: Path) -> str:
    """The run's ledger section; links are relative to the folder ``links_from``."""
    flows, verdicts = findings.flows, findings.verdicts
    counts = {kind: sum(v.verdict == kind for v in verdicts.values()) for kind in _KINDS}
    unjudged = sum(flow.id not in verdicts for flow in flows)
    out = [_heading(findings, links_from)]
    if (marker := findings.marker()) is not None:
        out.append(marker)
    summary = f"{len(flows)} flows: " + " · ".join(f"{n} {kind}" for kind, n in counts.items())
    out += ["", summary + (f" · {unjudged} not judged" if unjudged else "") + ".", ""]
    out += _failures(findings, links_from)
    out += _uncertain(findings)
    return "\n".join(out) + "\n"


_KINDS = ("pass", "fail", "uncertain")


def _heading(findings: RunFindings, links_from: Path) -> str:
    where = _relative(findings.path, links_from)
    if where == ".":  # the run's own ledger
        where = findings.path.resolve().name
    manifest = findings.manifest
    if manifest is None:
        return f"## Simulate run `{where}`"
    when = manifest.created_at.strftime("%Y-%m-%d %H:%M UTC")
    return f"## Simulate run `{where}` · target {_cell(manifest.target.name)} · {when}"


def _failures(findings: RunFindings, links_from: Path) -> list[str]:
    groups = failure_groups(findings.flows, findings.verdicts)
    if not groups:
        return ["No failures.", ""]
    out = [
        f"### Failures ({sum(len(g.flows) for g in groups)})",
        "",
        "| family | owner | failure category | count | representative |",
        "|---|---|---|---:|---|",
    ]
    for group in groups:
        first = group.flows[0]
        out.append(
            f"| {_cell(group.family)} | {_cell(group.owner)} | {_cell(group.category)} | "
            f"{len(group.flows)} | {_representative(findings, first, links_from)} |"
        )
    return [*out, ""]


def _representative(findings: RunFindings, flow_id: str, links_from: Path) -> str:
    """A link to the flow's place in the run's HTML page, and its conversations.jsonl line."""
    page = _relative(findings.path / REPORT_PAGE, links_from)
    link = f"[{flow_id}]({page}#flow-{flow_id})"
    line = findings.lines.get(flow_id)
    if line is None:
        return link
    conversations = _relative(findings.path / CONVERSATIONS, links_from)
    return f"{link} · [{CONVERSATIONS} line {line}]({conversations})"


def _uncertain(findings: RunFindings) -> list[str]:
    families = {flow.id: flow.family for flow in findings.flows}
    uncertain = [
        (flow.id, findings.verdicts[flow.id])
        for flow in findings.flows
        if flow.id in findings.verdicts and findings.verdicts[flow.id].verdict == "uncertain"
    ]
    if not uncertain:
        return []
    out = [
        f"### Uncertain ({len(uncertain)}): no verdict reached, not failures",
        "",
        "| flow | family | reason | detail |",
        "|---|---|---|---|",
    ]
    for flow_id, verdict in uncertain:
        detail = (verdict.evidence or "")[:EVIDENCE_CHARS]
        out.append(
            f"| {_cell(flow_id)} | {_cell(families[flow_id])} | "
            f"{_cell(verdict.reason or '—')} | {_cell(detail)} |"
        )
    return [*out, ""]


def _cell(text: str) -> str:
    """Text that stays inside one Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _relative(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def write_run_ledger(findings: RunFindings) -> Path:
    """``ledger.md`` of the run, rewritten atomically."""
    path = findings.path / LEDGER
    with private_atomic_writer(path) as handle:
        handle.write(f"# Findings\n\n{section(findings, findings.path)}".encode())
    return path


def append_once(findings: RunFindings, ledger: Path) -> bool:
    """Append the run's section to the team ledger unless it holds it already; True if it was
    appended now."""
    marker = findings.marker()
    if marker is None:
        return False
    with _folder_lock(ledger.parent):
        earlier = ledger.read_text(encoding="utf-8") if ledger.exists() else ""
        if marker in earlier:
            return False
        text = section(findings, ledger.parent)
        joined = earlier + ("\n" if earlier and not earlier.endswith("\n\n") else "") + text
        with private_atomic_writer(ledger) as handle:
            handle.write(joined.encode())
    return True


@contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on the folder itself: the ledger is replaced by a rename, so a lock on
    the file would not be held by the next writer's file."""
    private_mkdir(folder)
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
