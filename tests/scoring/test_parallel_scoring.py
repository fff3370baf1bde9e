"""``abt score`` on several cores writes what one process writes, and a worker's error reaches
the user as one process would report it."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from agent_backtest.errors import InputError
from agent_backtest.scoring.parallel import owners
from tests.scoring.builders import no_judge_run

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="scoring forks workers on Linux only"
)


def score(run: Path, workers: int) -> subprocess.CompletedProcess[str]:
    """``abt score RUN --workers N`` as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "agent_backtest.cli", "score", str(run), "--workers", str(workers)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_several_workers_write_the_files_one_process_writes(tmp_path: Path) -> None:
    one, three = no_judge_run(tmp_path / "one", 150), no_judge_run(tmp_path / "three", 150)
    alone, shared = score(one, 1), score(three, 3)
    assert alone.returncode == shared.returncode == 0, alone.stderr + shared.stderr
    for name in ("scores.jsonl", "summary.json"):
        assert (one / name).read_bytes() == (three / name).read_bytes(), name
    assert len((three / "scores.jsonl").read_bytes().splitlines()) == 150
    said = [  # without spaces: the terminal wraps the run's path where it falls
        "".join(done.stdout.replace(str(run), "RUN").split())
        for done, run in ((alone, one), (shared, three))
    ]
    assert said[0] == said[1]


def test_a_workers_error_is_the_one_a_single_process_reports(tmp_path: Path) -> None:
    messages = []
    for workers in (1, 2):
        run = no_judge_run(tmp_path / f"w{workers}", 120)
        units = run / "units.jsonl"
        lines = units.read_bytes().splitlines(keepends=True)
        lines[100] = b'{"schema": "abt.unit/1", "unit_id": \n'  # a torn line, late in the file
        units.write_bytes(b"".join(lines))
        done = score(run, workers)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert not (run / "scores.jsonl").exists()  # nothing half written
        messages.append(done.stderr.replace(str(run), "RUN"))
    assert messages[0] == messages[1]
    assert "units.jsonl: line 101: not valid JSON" in messages[1]


def test_too_few_workers_is_a_user_error(tmp_path: Path) -> None:
    done = score(no_judge_run(tmp_path / "run", 3), 0)
    assert done.returncode == 2
    assert "--workers: needs at least one worker, not 0" in done.stderr


def test_the_parent_takes_the_first_chunk_and_fewer_than_a_worker() -> None:
    # The parent also copies every worker's records, so it scores a smaller share of them.
    assert owners(12, 2) == [0, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1]
    assert owners(4, 1) == [0, 0, 0, 0]
    three = owners(32, 3)
    assert three[:3] == [0, 1, 2]
    assert three.count(1) == three.count(2) > three.count(0) > 0
    assert owners(16, 8).count(0) == 1  # copying seven workers' records is its whole job


COUNTS = """
import threading
from agent_backtest.scoring.parallel import worker_count
counts = [worker_count(None, 2_000), worker_count(3, 10)]
stop = threading.Event()
thread = threading.Thread(target=stop.wait)
thread.start()
counts.append(worker_count(3, 10_000))
stop.set()
print(counts)
"""


def test_small_runs_and_processes_with_threads_are_scored_in_one_process() -> None:
    # In a fresh interpreter: the test process may hold threads of its own.
    done = subprocess.run(
        [sys.executable, "-c", COUNTS], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[1, 3, 1]"


def test_a_user_error_crosses_processes_as_it_was_raised() -> None:
    error = InputError("units.jsonl", "line 3", "not a unit record", "run")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is InputError
    assert (copy.file, copy.location, copy.message, copy.parameter, str(copy)) == (
        error.file,
        error.location,
        error.message,
        error.parameter,
        str(error),
    )
