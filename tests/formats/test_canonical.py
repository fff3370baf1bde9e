"""The canonical JSONL: what ingest writes reads back identically."""

from __future__ import annotations

from pathlib import Path

from agent_backtest.formats import ReadOptions, SessionStream
from agent_backtest.trace import dump_record


def test_sessions_round_trip_through_canonical_jsonl(
    tau_trajectories: Path, tmp_path: Path
) -> None:
    sessions = list(SessionStream([tau_trajectories], ReadOptions()))
    path = tmp_path / "sessions.jsonl"
    path.write_bytes(b"".join(dump_record(s) + b"\n" for s in sessions))
    stream = SessionStream([path], ReadOptions())
    again = list(stream)
    assert stream.summaries[0].format == "canonical"
    assert again == sessions


def test_an_invalid_session_line_is_skipped_with_its_line(
    tau_trajectories: Path, tmp_path: Path
) -> None:
    session = next(iter(SessionStream([tau_trajectories], ReadOptions())))
    path = tmp_path / "sessions.jsonl"
    path.write_bytes(dump_record(session) + b'\n{"schema": "abt.session/1", "turns": 3}\n')
    stream = SessionStream([path], ReadOptions())
    assert len(list(stream)) == 1
    example = stream.summaries[0].skips.examples[0]
    assert (example.reason, example.location) == ("invalid_session", "line 2")
    assert "id" in example.detail


def test_duplicate_sessions_across_inputs_are_counted_and_ignored(
    tau_trajectories: Path, tmp_path: Path
) -> None:
    sessions = list(SessionStream([tau_trajectories], ReadOptions()))[:3]
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(b"".join(dump_record(s) + b"\n" for s in sessions))
    changed = sessions[2].model_copy(update={"metadata": {"edited": True}})
    second.write_bytes(b"".join(dump_record(s) + b"\n" for s in [*sessions[:2], changed]))
    stream = SessionStream([first, second], ReadOptions())
    assert [s.id for s in stream] == [s.id for s in sessions]
    assert stream.summaries[1].duplicate_sessions == 2
    assert stream.summaries[1].skips.counts == {"session_id_conflict": 1}
