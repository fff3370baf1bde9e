"""One append-only record log for every job: the first record of a key wins, a torn last line
is left out, a broken line elsewhere is named by file and line.

The records are the bench episodes of the recorded τ-bench trajectories, and verdicts."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agent_backtest.bench.models import EpisodeRecord
from agent_backtest.bench.run_files import (
    episodes_log,
    read_episodes,
    record_line,
    settle_episodes,
)
from agent_backtest.errors import InputError
from agent_backtest.runs.record_log import RecordLog
from agent_backtest.simulate.judging import read_verdicts, verdicts_log
from agent_backtest.simulate.models import Verdict
from agent_backtest.trace import dump_record
from tests.bench.results_runs import tau_episodes


def episodes(count: int) -> list[EpisodeRecord]:
    """The first ``count`` recorded episodes."""
    return [episode.record for episode in tau_episodes(range(count))]


def written(path: Path, records: list[EpisodeRecord]) -> Path:
    """An episodes file holding ``records``, appended one by one as a run appends them."""
    writer = episodes_log(path).open()
    for record in records:
        writer.append(record)
    writer.close()
    return path / "episodes.jsonl"


def test_the_first_record_of_a_key_wins_and_a_settle_keeps_only_it(tmp_path: Path) -> None:
    first, other = episodes(2)[:2]
    again = first.model_copy(update={"steps": first.steps + 5, "seconds": 1.0})
    file = written(tmp_path, [first, other, again])
    log = episodes_log(tmp_path)
    assert list(log.read()) == [first, other] and log.repeats == 1
    assert read_episodes(tmp_path) == [first, other]
    assert settle_episodes(tmp_path) == [first, other]
    assert file.read_bytes().count(b"\n") == 2  # the later record is gone from the file
    assert stat.S_IMODE(file.stat().st_mode) == 0o600


def test_a_torn_last_line_is_left_out_and_a_settle_drops_it(tmp_path: Path) -> None:
    records = episodes(1)
    file = written(tmp_path, records)
    whole = file.read_bytes()
    with file.open("ab") as handle:  # a writer killed mid-line
        handle.write(dump_record(episodes(2)[-1])[:40])
    assert read_episodes(tmp_path) == records
    settle_episodes(tmp_path)
    assert file.read_bytes() == whole


def test_a_broken_line_before_the_last_names_the_file_and_the_line(tmp_path: Path) -> None:
    records = episodes(1)[:3]
    file = written(tmp_path, records)
    lines = file.read_bytes().splitlines(keepends=True)
    file.write_bytes(lines[0] + lines[1][:25] + b"\n" + lines[2])
    with pytest.raises(InputError) as caught:
        read_episodes(tmp_path)
    assert (caught.value.file, caught.value.location) == (str(file), "line 2")
    assert f"{file}: line 2: not an episode: " in str(caught.value)
    # repairing leaves out every line that is no record, and keeps the rest
    log = episodes_log(tmp_path)
    assert list(log.read(repair=True)) == [records[0], records[2]]


def test_records_gives_every_whole_record_repeats_included(tmp_path: Path) -> None:
    first = episodes(1)[0]
    written(tmp_path, [first, first])
    log = episodes_log(tmp_path)
    assert list(log.records()) == [first, first] and list(log.read()) == [first]


def test_a_missing_log_reads_empty_and_a_settle_leaves_it_missing(tmp_path: Path) -> None:
    assert read_episodes(tmp_path) == [] and settle_episodes(tmp_path) == []
    assert not (tmp_path / "episodes.jsonl").exists()


def test_an_appended_record_is_on_disk_when_append_returns(tmp_path: Path) -> None:
    record = episodes(1)[0]
    writer = episodes_log(tmp_path).open(sync=True)
    writer.append(record)
    # read through another descriptor while the writer is still open: nothing is buffered
    fd = os.open(tmp_path / "episodes.jsonl", os.O_RDONLY)
    try:
        assert os.read(fd, 1 << 20) == record_line(record) + b"\n"
    finally:
        os.close(fd)
        writer.close()


def test_the_verdict_log_keeps_the_first_verdict_of_a_flow(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.jsonl"
    first = Verdict(flow_id="f1", verdict="uncertain", reason="judge_uncertain", decided_by="none")
    later = Verdict(flow_id="f1", verdict="pass", score=90, decided_by="judge")
    writer = verdicts_log(path).open(sync=False)
    writer.append(first)
    writer.append(later)
    writer.close()
    assert read_verdicts(path) == {"f1": first}
    # a verdict judged again replaces the old one by a rewrite without it, then an append
    verdicts_log(path).rewrite([])
    writer = verdicts_log(path).open(sync=False)
    writer.append(later)
    writer.close()
    assert read_verdicts(path) == {"f1": later}


def test_a_log_of_any_record_type_reads_by_its_key(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.jsonl"
    verdicts = [Verdict(flow_id=f"f{n}", verdict="pass", decided_by="judge") for n in range(3)]
    log = RecordLog(path, Verdict, lambda verdict: verdict.verdict)
    log.rewrite(verdicts)
    assert list(log.read()) == verdicts[:1] and log.repeats == 2
