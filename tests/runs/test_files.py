"""Clean files: killed writers' leftovers go on the next write; made folders are 0700."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_backtest.providers import ResponseCache
from agent_backtest.runs import private_atomic_writer

# A writer that starts to write a file and waits to be killed.
KILLED_WRITER = """
import sys, time
from pathlib import Path
from agent_backtest.runs import private_atomic_writer
with private_atomic_writer(Path(sys.argv[1])) as handle:
    handle.write(b"half of it")
    handle.flush()
    print("writing", flush=True)
    time.sleep(60)
"""


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def parts(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))


def start_writer(target: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(target)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline() == "writing\n"
    return process


def test_a_killed_writers_part_file_goes_on_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    writer = start_writer(target)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    assert len(parts(tmp_path)) == 1 and not target.exists()
    other = tmp_path / "other.json"
    with private_atomic_writer(other) as handle:  # another file's write leaves it alone
        handle.write(b"{}")
    assert len(parts(tmp_path)) == 1
    with private_atomic_writer(target) as handle:
        handle.write(b"{}")
    assert parts(tmp_path) == [] and target.read_bytes() == b"{}"


def test_a_live_writers_part_file_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "units.jsonl"
    writer = start_writer(target)
    try:
        live = parts(tmp_path)
        with private_atomic_writer(target) as handle:
            handle.write(b"mine")
        assert parts(tmp_path) == live and len(live) == 1
    finally:
        writer.kill()
        writer.wait()


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def test_folders_made_for_a_file_are_private_whatever_the_umask(
    tmp_path: Path, open_umask: None
) -> None:
    target = tmp_path / "a" / "b" / "c" / "summary.json"
    with private_atomic_writer(target) as handle:
        handle.write(b"{}")
    for folder in (tmp_path / "a", tmp_path / "a" / "b", target.parent):
        assert mode(folder) == 0o700, folder
    assert mode(target) == 0o600


def test_cache_folders_are_private_whatever_the_umask(tmp_path: Path, open_umask: None) -> None:
    ResponseCache(tmp_path / "x" / "y" / "cache").close()
    for folder in (tmp_path / "x", tmp_path / "x" / "y", tmp_path / "x" / "y" / "cache"):
        assert mode(folder) == 0o700, folder


def test_a_run_made_under_umask_000_is_private(tmp_path: Path) -> None:
    from tests.conftest import write_tau_units

    units = write_tau_units(tmp_path / "units.jsonl", limit=2)
    out = tmp_path / "deep" / "runs" / "r"
    subprocess.run(
        f"umask 000 && {sys.executable} -m agent_backtest.cli replay {units} --model mock/golden "
        f"--out {out} --cache-dir {tmp_path / 'c1' / 'c2'}",
        shell=True,
        check=True,
        capture_output=True,
    )
    for folder in (tmp_path / "deep", tmp_path / "deep" / "runs", out, tmp_path / "c1"):
        assert mode(folder) == 0o700, folder
    assert all(mode(f) == 0o600 for f in out.iterdir()), {f.name: mode(f) for f in out.iterdir()}


def test_only_a_synced_write_waits_for_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    target = tmp_path / "run.json"
    with private_atomic_writer(target, sync=False) as handle:
        handle.write(b'{"calls": 1}')
    assert synced == [] and target.read_bytes() == b'{"calls": 1}' and parts(tmp_path) == []
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    with private_atomic_writer(target) as handle:
        handle.write(b'{"calls": 2}')
    assert len(synced) == 1 and target.read_bytes() == b'{"calls": 2}'
