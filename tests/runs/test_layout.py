"""The run directory's files: each defined once, each with a path and a schema."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.api.schemas import RECORDS
from agent_backtest.cli.app import app
from agent_backtest.runs import LAYOUT, RUN_FILES, RunDirectory
from agent_backtest.runs.layout import KEPT_BY_SCORING, SCORES, SUMMARY

runner = CliRunner()
RENDERINGS = (".html", ".csv", ".log")  # pages, spreadsheets and the calls log, not records


def test_every_file_a_run_can_hold_has_a_schema() -> None:
    for run_file in LAYOUT:
        if run_file.record is None:
            assert run_file.name.endswith(RENDERINGS), f"{run_file.name} holds no record"
        else:
            assert run_file.record in RECORDS, f"{run_file.name}: no schema for {run_file.record}"
    assert RUN_FILES == tuple(run_file.name for run_file in LAYOUT)


def test_every_file_a_run_can_hold_has_its_own_path(tmp_path: Path) -> None:
    directory = RunDirectory(tmp_path)
    paths = {
        getattr(directory, name)
        for name in dir(RunDirectory)
        if isinstance(getattr(RunDirectory, name), property) and name.endswith("_path")
    }
    assert paths == {tmp_path / run_file.name for run_file in LAYOUT}


def test_earlier_scorings_are_kept_under_their_id(tmp_path: Path) -> None:
    directory = RunDirectory(tmp_path)
    assert directory.kept_path(SCORES, "abc123") == tmp_path / "scores.abc123.jsonl"
    assert directory.kept_path(SUMMARY, "abc123") == tmp_path / "summary.abc123.json"
    directory.scores_path.write_text("{}\n")
    directory.summary_path.write_text(json.dumps({"scoring": {"scoring_id": "abc123"}}))
    assert directory.set_aside_scoring("abc123") == []
    assert directory.set_aside_scoring("def456") == [
        tmp_path / "scores.abc123.jsonl",
        tmp_path / "summary.abc123.json",
    ]
    assert not directory.scores_path.exists() and not directory.summary_path.exists()
    # a folder whose summary names no scoring id has nothing to keep aside
    directory.summary_path.write_text("not json")
    assert directory.set_aside_scoring("def456") == []


def test_overwrite_removes_every_file_of_the_old_run(tmp_path: Path) -> None:
    directory = RunDirectory(tmp_path / "run")
    directory.create(overwrite=False)
    for run_file in LAYOUT:
        directory.file(run_file).write_text("old")
    for run_file in KEPT_BY_SCORING:
        directory.kept_path(run_file, "0123456789ab").write_text("old")
    (directory.path / "notes.txt").write_text("the user's own")
    directory.create(overwrite=True)
    assert [p.name for p in directory.path.iterdir()] == ["notes.txt"]
    assert stat.S_IMODE(directory.path.stat().st_mode) == 0o700


def test_schema_prints_every_record_keyed_by_name() -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    documents = json.loads(result.stdout)
    assert sorted(documents) == sorted(RECORDS) and len(RECORDS) == 23
    for name, document in documents.items():
        if name == "run_base":  # every job's run.json meets it: each job's schema is allowed
            allowed = document["properties"]["schema"]["enum"]
            assert allowed == ["abt.run/2", "abt.simulate_run/1", "abt.bench_run/1"]
            continue
        assert document["properties"]["schema"]["const"].startswith("abt."), name
    one = runner.invoke(app, ["schema", "summary"])
    assert one.exit_code == 0 and json.loads(one.stdout) == documents["summary"]
    assert documents["summary"]["properties"]["schema"]["const"] == "abt.summary/3"
    help_text = runner.invoke(app, ["schema", "--help"]).stdout
    assert all(name in help_text for name in RECORDS)


@pytest.mark.parametrize("name", ["summary", "comparison", "profile", "patch_coverage"])
def test_every_field_of_a_run_document_says_what_it_holds(name: str) -> None:
    document = RECORDS[name].model_json_schema(by_alias=True)
    models = [document, *document.get("$defs", {}).values()]
    undescribed = [
        f"{model.get('title')}.{field}"
        for model in models
        for field, spec in model.get("properties", {}).items()
        if field != "schema" and not spec.get("description")
    ]
    assert undescribed == []
