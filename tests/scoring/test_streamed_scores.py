"""Scoring a run keeps sums, not records: the scores and summary written as they stream are
the ones the records list gives, whatever order the answers arrive in."""

from __future__ import annotations

import asyncio
import csv
import io
import random
from pathlib import Path

import pytest

from agent_backtest.errors import InputError
from agent_backtest.reporting import write_report
from agent_backtest.runs import RunDirectory, read_results
from agent_backtest.runs.documents import write_document
from agent_backtest.runs.summary import RunFacts
from agent_backtest.scoring.run import LiveScoring, ScoreSettings, score_run
from agent_backtest.scoring.summary import summarise
from agent_backtest.trace import LLMResponse, Message, ToolCall
from agent_backtest.units import Unit
from tests.reporting.runs import Answer, build_run, golden, tau_units, timeout, wrong


def mixed(unit: Unit) -> Answer:
    """Production's answer, a wrong one, an argument changed, or a timeout, by unit."""
    choice = int(unit.unit_id.encode().hex(), 16) % 4
    calls = unit.golden.message.tool_calls
    if choice == 0 and calls:
        call = calls[0]
        arguments = {**call.arguments, "extra": "x", **dict.fromkeys(list(call.arguments)[:1], 7)}
        changed = ToolCall(id=call.id, name=call.name, arguments=arguments)
        return LLMResponse(message=Message(role="assistant", tool_calls=[changed]))
    return [golden, wrong, timeout, golden][choice](unit)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scored run of 30 τ-bench units, two repeats each, answered in several ways."""
    folder = tmp_path_factory.mktemp("streamed")
    return build_run(folder / "run", tau_units(folder, 30), mixed, k=2)


def test_the_streamed_summary_is_the_summary_of_the_records_list(run: Path, tmp_path: Path) -> None:
    directory = RunDirectory(run)
    manifest, written = directory.load_manifest(), directory.read_summary()
    records = list(directory.read_scores())
    assert len(records) == 60 and written.repeats is not None
    assert len({r.score for r in records if r.score is not None}) > 2  # partial credit too
    facts = RunFacts(
        model=manifest.config.candidate.model,
        k=manifest.config.k,
        status=manifest.status,
        units=manifest.units,
        partial=False,
    )
    # what the run spent is read from its results and run.json, not from the score records
    listed = summarise(records, written.scoring, facts, manifest.labels, spent=written.spent)
    write_document(tmp_path / "listed.json", listed)
    assert (tmp_path / "listed.json").read_bytes() == directory.summary_path.read_bytes()


def test_live_scoring_in_any_arrival_order_writes_what_abt_score_writes(run: Path) -> None:
    directory = RunDirectory(run)
    scores, summary = directory.scores_path.read_bytes(), directory.summary_path.read_bytes()
    positions = {unit.unit_id: index for index, unit in enumerate(directory.read_units())}
    units = {unit.unit_id: unit for unit in directory.read_units()}
    arrivals = list(read_results(directory.results_path))
    random.Random(3).shuffle(arrivals)
    live = LiveScoring(ScoreSettings(), repeats=2)

    async def land() -> None:
        for result in arrivals:
            await live.add(positions[result.unit_id], units[result.unit_id], result)

    asyncio.run(land())
    outcome = live.finish(directory)
    assert outcome.kept_earlier == []  # the same scoring id: nothing set aside
    assert directory.scores_path.read_bytes() == scores
    assert directory.summary_path.read_bytes() == summary


def test_results_in_another_order_than_the_units_score_the_same(run: Path) -> None:
    directory = RunDirectory(run)
    scores = directory.scores_path.read_bytes()
    lines = directory.results_path.read_bytes().splitlines(keepends=True)
    random.Random(4).shuffle(lines)
    directory.results_path.write_bytes(b"".join(lines))
    score_run(directory, ScoreSettings())
    assert directory.scores_path.read_bytes() == scores


def test_a_results_line_that_is_json_but_no_record_is_named(run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    copy.mkdir()
    for path in run.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    results = copy / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    broken = lines[4].replace(b'"attempts":1', b'"attempts":"many"')
    assert broken != lines[4]
    results.write_bytes(b"".join([*lines[:4], broken, *lines[5:], b'{"unit_id": "torn']))
    with pytest.raises(InputError) as caught:
        score_run(RunDirectory(copy), ScoreSettings())
    assert caught.value.location == "line 5"
    results.write_bytes(b"".join([*lines, b'{"unit_id": "torn']))  # only a torn last line
    assert score_run(RunDirectory(copy), ScoreSettings()).summary.counts.records == 60


def test_the_report_joins_results_written_in_any_order(run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    copy.mkdir()
    for path in run.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    write_report(copy)
    page, table = (copy / "report.html").read_bytes(), (copy / "results.csv").read_bytes()
    rows = list(csv.DictReader(io.StringIO(table.decode())))
    assert len(rows) == 60 and len({row["unit_id"] for row in rows}) == 30
    results = copy / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    random.Random(6).shuffle(lines)
    results.write_bytes(b"".join(lines))
    write_report(copy)
    assert (copy / "report.html").read_bytes() == page
    assert (copy / "results.csv").read_bytes() == table
