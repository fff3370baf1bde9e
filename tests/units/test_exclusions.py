"""``--exclude-sessions`` files of every kind, read into the sessions they name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.errors import InputError
from agent_backtest.units import ExcludedSessions, read_session_ids
from tests.conftest import FIXTURES
from tests.reporting.runs import build_run, tau_units, wrong


def ids(path: Path) -> frozenset[str]:
    excluded = read_session_ids(path)
    assert excluded.file == str(path)
    return excluded.ids


def test_ids_jsonl_and_run_directories(tmp_path: Path) -> None:
    listed = tmp_path / "ids.txt"
    listed.write_text("# held out\ns1\n\ns2\n")
    assert read_session_ids(listed) == ExcludedSessions(str(listed), frozenset({"s1", "s2"}))
    run = tmp_path / "run"
    run.mkdir()
    (run / "units.jsonl").write_text(json.dumps({"session_id": "s3"}) + "\n")
    assert ids(run) == {"s3"}
    sessions = tmp_path / "sessions.jsonl"
    sessions.write_text(
        json.dumps({"schema": "abt.session/1", "id": "s4"})
        + "\n"
        + json.dumps({"schema": "abt.session/1", "id": "s5"})
        + "\n"
    )
    assert ids(sessions) == {"s4", "s5"}
    # Unicode line separators inside a record's text do not end its line.
    units = tmp_path / "units.jsonl"
    units.write_bytes(
        b'{"session_id": "s6", "note": "a\xe2\x80\xa8b\xc2\x85c"}\r\n{"session_id": "s7"}\n'
    )
    assert ids(units) == {"s6", "s7"}
    assert ids(FIXTURES / "canonical" / "sessions.jsonl") == {
        "tau-task0-trial0",
        "tau-task1-trial0",
    }


def test_a_results_csv_as_abt_report_writes_it(tmp_path: Path) -> None:
    units = tau_units(tmp_path, 6)
    # Session ids that a spreadsheet would run as formulas: the CSV keeps them as text.
    renamed = {"tau-task0-trial0": "=task0", "tau-task0-trial1": "-task0-1"}
    units = [
        u.model_copy(update={"session_id": renamed.get(u.session_id, u.session_id)}) for u in units
    ]
    run = build_run(tmp_path / "run", units, wrong)
    assert CliRunner().invoke(app, ["report", str(run)]).exit_code == 0
    results = run / "results.csv"
    assert "'=task0" in results.read_text()
    assert ids(results) == {u.session_id for u in units}


def test_a_results_csv_without_session_column_is_refused(tmp_path: Path) -> None:
    results = tmp_path / "results.csv"
    results.write_text("unit_id,repeat\nu-1,0\n")
    with pytest.raises(InputError, match="session column") as error:
        read_session_ids(results)
    assert error.value.file == str(results) and error.value.location == "line 1"
    results.write_text('unit_id,session\nu-1,s1\nu-2,""\n')
    with pytest.raises(InputError, match="no session") as error:
        read_session_ids(results)
    assert error.value.location == "line 3"
    results.write_text('unit_id,session\nu-1,"s1"x\n')
    with pytest.raises(InputError, match="not valid CSV") as error:
        read_session_ids(results)
    assert error.value.location == "line 2"


def test_json_documents_of_sessions(tmp_path: Path) -> None:
    document = tmp_path / "sessions.json"
    document.write_text(json.dumps(["s1", "s2"]))
    assert ids(document) == {"s1", "s2"}
    document.write_text(json.dumps([{"session_id": "s3"}, {"id": "s4"}, {"session_id": 5}]))
    assert ids(document) == {"s3", "s4", "5"}
    document.write_text(json.dumps({"sessions": ["s6", {"id": "s7"}]}, indent=2))
    assert ids(document) == {"s6", "s7"}
    # A session/step export is such a document: its sessions carry session_id.
    assert ids(FIXTURES / "session_steps" / "example.json") == {"sess-7f3a", "sess-b210"}


@pytest.mark.parametrize(
    ("text", "location", "message"),
    [
        ('["s1", 2]', "$[1]", "expected a session id"),
        ('{"sessions": [{"name": "x"}]}', "$.sessions[0]", "session_id or id"),
        ('{"sessions": "s1"}', "$.sessions", "expected a list"),
        ('[\n  "s1",\n  oops\n]', "line 3 column 3", "not valid JSON"),
        ('{"session_id": "s1"}\n{"other": 1}\n', "line 2", "needs a session_id"),
        ('{"session_id": "s1"}\n{broken\n', "line 2", "not valid JSON"),
        ('{\n  "other": 1\n}', "$", "needs a session_id"),
    ],
)
def test_malformed_documents_name_the_place(
    tmp_path: Path, text: str, location: str, message: str
) -> None:
    path = tmp_path / "exclude.json"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as error:
        read_session_ids(path)
    assert (error.value.file, error.value.location) == (str(path), location)


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read") as error:
        read_session_ids(tmp_path / "missing.txt")
    assert error.value.file == str(tmp_path / "missing.txt")
    empty_run = tmp_path / "run"
    empty_run.mkdir()
    with pytest.raises(InputError, match="cannot read") as error:
        read_session_ids(empty_run)
    assert error.value.file == str(empty_run / "units.jsonl")
    binary = tmp_path / "ids.txt"
    binary.write_bytes(b"s1\n\xff\xfe\n")
    with pytest.raises(InputError, match="UTF-8") as error:
        read_session_ids(binary)
    assert error.value.location == "byte 3"
