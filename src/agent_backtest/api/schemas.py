"""``schema()``: the JSON Schema of every record the jobs persist, by record name."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agent_backtest.bench.models import BenchmarkManifest, EpisodeRecord, GradeRecord
from agent_backtest.bench.results import BenchSummary
from agent_backtest.bench.run_manifest import BenchRunManifest
from agent_backtest.errors import UserError
from agent_backtest.patch import CoverageReport, Patch
from agent_backtest.runs import Comparison, ResultRecord, RunManifest, ScoreRecord, Summary
from agent_backtest.runs.manifest_base import ManifestBase
from agent_backtest.runs.profile import Profile
from agent_backtest.simulate.compare import SimulateComparison
from agent_backtest.simulate.coverage import CoverageManifest
from agent_backtest.simulate.judging import JudgingSettings
from agent_backtest.simulate.manifest import SimulateManifest
from agent_backtest.simulate.models import ConversationRecord, Verdict
from agent_backtest.simulate.summary import SimulateSummary
from agent_backtest.trace import Session
from agent_backtest.units import Unit

# Every persisted record by name: sessions JSONL (abt ingest -o), the manifest base that every
# job's run.json meets, what a replay run directory holds (runs.layout names each file's
# record), then a benchmark's manifest, a bench run's and a simulate run's records.
RECORDS: dict[str, type[BaseModel]] = {
    "session": Session,
    "unit": Unit,
    "run_base": ManifestBase,
    "run": RunManifest,
    "result": ResultRecord,
    "score": ScoreRecord,
    "summary": Summary,
    "comparison": Comparison,
    "profile": Profile,
    "patch": Patch,
    "patch_coverage": CoverageReport,
    "benchmark": BenchmarkManifest,
    "bench_run": BenchRunManifest,
    "episode": EpisodeRecord,
    "grade": GradeRecord,
    "bench_summary": BenchSummary,
    "simulate_run": SimulateManifest,
    "conversation": ConversationRecord,
    "judging": JudgingSettings,
    "verdict": Verdict,
    "simulate_summary": SimulateSummary,
    "simulate_comparison": SimulateComparison,
    "simulate_coverage": CoverageManifest,
}


def schema(record: str | None = None) -> dict[str, Any]:
    """The JSON Schema of ``record`` (one of :data:`RECORDS`), or of every record keyed by name."""
    if record is None:
        return {name: model.model_json_schema(by_alias=True) for name, model in RECORDS.items()}
    if record not in RECORDS:
        raise UserError(
            f"no record is called {record!r}: give one of {', '.join(RECORDS)}", "record"
        )
    return RECORDS[record].model_json_schema(by_alias=True)
