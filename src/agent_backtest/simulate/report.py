"""Write ``summary.json`` and ``report.html`` into a simulate run, from its records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson
from pydantic import ValidationError

from agent_backtest.errors import InputError
from agent_backtest.redaction import mask_secrets
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.simulate.layout import MANIFEST, PAGE, SUMMARY
from agent_backtest.simulate.manifest import SimulateManifest
from agent_backtest.simulate.models import ConversationRecord, Flow, Verdict
from agent_backtest.simulate.page import render_page
from agent_backtest.simulate.summary import SimulateSummary, summarise


@dataclass
class SimulateReport:
    """The summary of a simulate run and where it and the page were written."""

    summary: SimulateSummary
    summary_path: Path
    page_path: Path


def write_report(
    run: Path,
    flows: Sequence[Flow],
    conversations: Mapping[str, ConversationRecord],
    verdicts: Iterable[Verdict],
    show_secrets: bool = False,
) -> SimulateReport:
    """(Re)write summary.json and report.html of the run at ``run``, atomically (mode 0600);
    on the page, values shaped like credentials (in the transcripts, the evidence and the
    reproductions) are masked unless ``show_secrets``."""
    decided = {verdict.flow_id: verdict for verdict in verdicts}
    summary = summarise(flows, conversations, decided.values())
    document = summary.model_dump(mode="json", by_alias=True)
    with private_atomic_writer(run / SUMMARY) as handle:
        handle.write(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    html = render_page(run.name, flows, conversations, decided, summary, _manifest(run))
    if not show_secrets:  # key shapes hold no character HTML escapes: the page text is masked
        html = mask_secrets(html)
    with private_atomic_writer(run / PAGE) as handle:
        handle.write(html.encode("utf-8"))
    return SimulateReport(summary, run / SUMMARY, run / PAGE)


def _manifest(run: Path) -> SimulateManifest | None:
    """The run's manifest, for the page's facts; a run judged from bare records has none."""
    path = run / MANIFEST
    if not path.is_file():
        return None
    try:
        return SimulateManifest.load(path)
    except ValidationError as exc:
        detail = exc.errors()[0]["msg"]
        raise InputError(path, None, f"not a simulate run manifest: {detail}") from None
