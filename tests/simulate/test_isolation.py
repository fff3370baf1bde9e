"""Isolation of flows that may change the agent's data: a SQLite fixture restored byte for
byte, or the user's snapshot and restore commands around every such flow."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_backtest.api.simulate import simulate_resume, simulate_run
from agent_backtest.errors import UserError
from agent_backtest.simulate.plan import IsolationOptions
from tests.simulate.agent_server import AgentServer
from tests.simulate.conftest import flows_file, scripted, target_file

WRITES = [
    scripted("add-1", "note: ring Bo", "list notes", mutates=True),
    scripted("add-2", "note: pay rent", "list notes", mutates=True),
    scripted("chat", "hello"),
]


def test_a_fixture_db_is_restored_byte_identical_after_mutating_flows(
    tmp_path: Path, agent: AgentServer, notes_db: Path
) -> None:
    original = notes_db.read_bytes()
    flows = flows_file(tmp_path / "flows.jsonl", WRITES)
    target = target_file(tmp_path / "t.toml", agent.base_url)
    done = simulate_run(
        flows, target=target, out=tmp_path / "r", skip_judge=True,
        isolation=IsolationOptions(fixture_db=notes_db),
    )  # fmt: skip
    assert notes_db.read_bytes() == original
    by_id = {c.flow_id: c for c in done.conversations()}
    # Each flow saw its own note and none of the other's: restored before and after.
    assert by_id["add-1"].turns[1].tool_calls[0].result == '["buy milk", "call Ana", "ring Bo"]'
    assert by_id["add-2"].turns[1].tool_calls[0].result == '["buy milk", "call Ana", "pay rent"]'
    assert (by_id["add-1"].isolated, by_id["chat"].isolated) == (True, False)
    assert done.manifest.played.isolated == 2
    assert done.manifest.isolation.kind == "fixture_db"


def test_a_fixture_db_is_restored_when_the_flow_fails(
    tmp_path: Path, agent: AgentServer, notes_db: Path
) -> None:
    original = notes_db.read_bytes()
    flows = flows_file(tmp_path / "f.jsonl", [scripted("w", "note: x", "boom", mutates=True)])
    target = target_file(tmp_path / "t.toml", agent.base_url)
    done = simulate_run(
        flows, target=target, out=tmp_path / "r", skip_judge=True,
        isolation=IsolationOptions(fixture_db=notes_db),
    )  # fmt: skip
    assert done.conversations()[0].transport_error is not None
    assert notes_db.read_bytes() == original


def test_a_database_in_wal_mode_is_refused(tmp_path: Path, agent: AgentServer) -> None:
    db = tmp_path / "wal.db"
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE t (x)")
    connection.commit()
    connection.close()
    flows = flows_file(tmp_path / "f.jsonl", WRITES)
    target = target_file(tmp_path / "t.toml", agent.base_url)
    with pytest.raises(UserError, match="is in WAL mode"):
        simulate_run(
            flows, target=target, out=tmp_path / "r", skip_judge=True,
            isolation=IsolationOptions(fixture_db=db),
        )  # fmt: skip
    assert not (tmp_path / "r").exists()


def test_snapshot_and_restore_commands_run_around_every_isolated_flow(
    tmp_path: Path, agent: AgentServer, notes_db: Path
) -> None:
    calls = tmp_path / "calls.txt"
    snapshot = f"cp {notes_db} {tmp_path}/snap.db && echo snapshot >> {calls}"
    restore = f"cp {tmp_path}/snap.db {notes_db} && echo restore >> {calls}"
    original = notes_db.read_bytes()
    flows = flows_file(tmp_path / "flows.jsonl", WRITES)
    target = target_file(tmp_path / "t.toml", agent.base_url)
    options = IsolationOptions(snapshot_cmd=snapshot, restore_cmd=restore)
    done = simulate_run(flows, target=target, out=tmp_path / "r", skip_judge=True,
                        isolation=options)  # fmt: skip
    # Once, then before and after each of the two isolated flows, then once at the end.
    assert calls.read_text().split() == ["snapshot"] + ["restore"] * 5
    assert notes_db.read_bytes() == original
    assert done.manifest.status == "completed"
    with pytest.raises(UserError, match="give the same --snapshot-cmd and --restore-cmd"):
        simulate_resume(done.path, skip_judge=True)
    simulate_resume(done.path, snapshot_cmd=snapshot, restore_cmd=restore, skip_judge=True)


def test_a_failing_restore_stops_the_run(
    tmp_path: Path, agent: AgentServer, notes_db: Path
) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", WRITES)
    target = target_file(tmp_path / "t.toml", agent.base_url)
    options = IsolationOptions(snapshot_cmd="true", restore_cmd="echo disk full >&2; exit 3")
    with pytest.raises(UserError, match=r"--restore-cmd failed \(exit 3\): disk full"):
        simulate_run(flows, target=target, out=tmp_path / "r", skip_judge=True,
                     isolation=options)  # fmt: skip
    manifest = (tmp_path / "r" / "run.json").read_text()
    assert '"status": "failed"' in manifest
    # The read-only flow ran first; no mutating flow got a turn on unrestored data.
    assert "note:" not in (tmp_path / "agent.log").read_text()
