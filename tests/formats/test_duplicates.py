"""An export concatenated with itself gives the units of the export alone, the repeats counted."""

from __future__ import annotations

import json
from pathlib import Path

import agent_backtest as abt
from agent_backtest.api import ReadingOptions
from agent_backtest.units import AgentConfig
from agent_backtest.units.source import UnitSource
from tests.cli.test_cli import run

FIXTURES = Path(__file__).parents[1] / "fixtures"


def read(path: Path) -> tuple[list[str], dict[str, int]]:
    source = UnitSource([path], ReadingOptions().read_options(), AgentConfig())
    units = [unit.unit_id for unit in source]
    return units, dict(source.skipped_records())


def test_an_otlp_export_twice_gives_its_units_once(tmp_path: Path) -> None:
    original = FIXTURES / "otlp" / "events.jsonl"
    doubled = tmp_path / "doubled.jsonl"
    doubled.write_text(original.read_text() * 2)
    alone, skips = read(original)
    twice, doubled_skips = read(doubled)
    spans = sum(
        len(scope["spans"])
        for line in original.read_text().splitlines()
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
    )
    assert alone and twice == alone
    assert "duplicate_span" not in skips
    assert doubled_skips["duplicate_span"] == spans


def test_a_langfuse_export_with_its_observations_twice_gives_its_units_once(
    tmp_path: Path,
) -> None:
    original = FIXTURES / "frameworks" / "langfuse" / "koog-2025-08-26.trace.json"
    export = json.loads(original.read_text())
    count = len(export["observations"])
    export["observations"] = export["observations"] * 2
    doubled = tmp_path / "doubled.json"
    doubled.write_text(json.dumps(export))
    alone, _ = read(original)
    twice, skips = read(doubled)
    assert len(alone) == 2 and twice == alone
    assert skips["duplicate_span"] == count


def test_a_repeated_span_id_with_other_content_is_a_conflict(tmp_path: Path) -> None:
    original = FIXTURES / "frameworks" / "langfuse" / "koog-2025-08-26.trace.json"
    export = json.loads(original.read_text())
    changed = dict(export["observations"][0], name="renamed")
    export["observations"].append(changed)
    path = tmp_path / "conflict.json"
    path.write_text(json.dumps(export))
    _, skips = read(path)
    assert skips == {"span_id_conflict": 1}


def test_ingest_replay_and_profile_count_the_repeats_alike(tmp_path: Path) -> None:
    doubled = tmp_path / "doubled.jsonl"
    doubled.write_text((FIXTURES / "otlp" / "events.jsonl").read_text() * 2)
    code, stdout, _ = run("ingest", doubled, "-o", tmp_path / "sessions.jsonl", "--json")
    assert code == 0
    ingested = json.loads(stdout)["inputs"][0]["skips"]["duplicate_span"]
    profiled = abt.profile(doubled).inputs[0].skips["duplicate_span"]
    replay = abt.replay(doubled, model="mock/golden", out=tmp_path / "run", score=False)
    replayed = replay.manifest.readers.skipped_records["duplicate_span"]
    assert ingested == profiled == replayed > 0
