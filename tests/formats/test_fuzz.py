"""Every reader, fed mutations of the real fixtures, reads or refuses in one line: never a crash.
The same for every other kind of file abt reads (settings, benchmark and run files), through the
command that reads it, and for a named pipe, a device or a folder given in its place.

Seeded (``derandomize``): the same examples every run, so a failure here is one to fix, not
noise. ``benchmarks/fuzz_readers.py`` runs the same mutations by the ten thousand.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.formats.file_kinds import (
    FILE_KINDS,
    FileCase,
    Workspace,
    mutate_file,
    place,
    read_case,
    replace_by,
    run_command,
    workspace,
)
from tests.formats.mutations import FIXTURE_FORMATS, fixture_bytes, mutate, read_everything

CONTENTS = fixture_bytes()


@settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    fixture=st.sampled_from(sorted(FIXTURE_FORMATS)),
    forced=st.booleans(),
)
def test_a_mutated_input_is_read_or_refused_in_one_short_line(
    tmp_path: Path, seed: int, fixture: str, forced: bool
) -> None:
    case = mutate(seed, fixture, CONTENTS)
    path = tmp_path / f"case{case.suffix}"
    path.write_bytes(case.data)
    outcome = read_everything(path, case.format if forced else None)
    assert outcome == "ok" or outcome.startswith("refused: ")
    assert "\n" not in outcome and len(outcome) < 1_500, outcome[:300]


@pytest.mark.parametrize("fixture", sorted(FIXTURE_FORMATS))
def test_every_fixture_reads_clean_unmutated(tmp_path: Path, fixture: str) -> None:
    path = tmp_path / Path(fixture).name
    path.write_bytes(CONTENTS[fixture])
    assert read_everything(path, FIXTURE_FORMATS[fixture]) == "ok"


# -- every other file abt reads ---------------------------------------------------------------

FILE_KIND_NAMES = sorted(FILE_KINDS)
HANG_SECONDS = 20


@pytest.fixture(scope="module")
def file_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return workspace(tmp_path_factory.mktemp("file-kinds"))


def one_short_line(outcome: str) -> None:
    """A command ended as it meant to, with at most one short error line."""
    code = int(outcome.split(":", 1)[0].removeprefix("exit "))
    assert 0 <= code <= 3, outcome
    assert "more error lines" not in outcome and len(outcome) < 1_500, outcome[:300]


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(min_value=0, max_value=2**32), kind=st.sampled_from(FILE_KIND_NAMES))
def test_a_mutated_file_of_any_kind_is_read_or_refused_in_one_line(
    tmp_path_factory: pytest.TempPathFactory, file_workspace: Workspace, seed: int, kind: str
) -> None:
    case = mutate_file(seed, kind, file_workspace)
    outcome = read_case(case, file_workspace, tmp_path_factory.mktemp("case"))
    one_short_line(outcome)


@pytest.mark.parametrize("kind", FILE_KIND_NAMES)
def test_every_file_kind_reads_clean_unmutated(
    tmp_path: Path, file_workspace: Workspace, kind: str
) -> None:
    case = FileCase(kind, "none", FILE_KINDS[kind].seed(file_workspace))
    outcome = read_case(case, file_workspace, tmp_path)
    # each command got past its file: a refusal, if any, is about something else
    assert FILE_KINDS[kind].filename not in outcome, outcome


@contextmanager
def at_most(seconds: int) -> Iterator[None]:
    """Fail (rather than hang the suite) when the block blocks longer than ``seconds``."""

    def stop(signum: int, frame: object) -> None:
        raise TimeoutError(f"still reading after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("what", ["fifo", "dev_zero", "folder"])
def test_a_pipe_a_device_or_a_folder_is_refused_for_every_kind_without_opening_it(
    tmp_path: Path, file_workspace: Workspace, what: str
) -> None:
    for kind in FILE_KIND_NAMES:
        scratch = tmp_path / kind
        scratch.mkdir()
        path = place(FILE_KINDS[kind].seed(file_workspace), kind, file_workspace, scratch)
        replace_by(path, what)
        with at_most(HANG_SECONDS):
            code, output = run_command(FILE_KINDS[kind].command(path, file_workspace, scratch))
        assert code == 2, (kind, output)
        error = output.strip().splitlines()[-1]
        assert error.startswith("abt: error: ") and path.name in error, (kind, output)
        refusals = (
            "give a regular file",
            "the run is damaged",
            "outside the benchmark directory",
            "units.jsonl: cannot read",  # a folder is a run whose sessions to leave out
        )
        assert any(refusal in error for refusal in refusals), error


@pytest.mark.parametrize("kind", ["flows_yaml", "run_results"])
def test_a_pipe_or_dev_zero_ends_a_whole_process_in_one_line(
    tmp_path: Path, file_workspace: Workspace, kind: str
) -> None:
    for what in ("fifo", "dev_zero"):
        scratch = tmp_path / what
        scratch.mkdir()
        path = place(FILE_KINDS[kind].seed(file_workspace), kind, file_workspace, scratch)
        replace_by(path, what)
        argv = [str(arg) for arg in FILE_KINDS[kind].command(path, file_workspace, scratch)]
        done = subprocess.run(
            [sys.executable, "-m", "agent_backtest.cli", *argv],
            capture_output=True,
            text=True,
            timeout=HANG_SECONDS,
            env={**os.environ, "COLUMNS": "200"},
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
