"""Keeping flows that may change the agent's data from changing it for the next flow.

Two ways: a SQLite fixture file (its bytes are kept once in the run directory and written back
in place, so an agent holding the file open reads the restored data on its next transaction),
or the user's own snapshot and restore commands. Either way the state is snapshotted once,
restored before and after every isolated flow (after it in a ``finally``, whatever happened),
and once more at the end. A restore that fails stops the run: going on would play the next
flow on data nobody knows.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from agent_backtest.errors import UserError
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.simulate.shell import failure, run_shell

SQLITE_HEADER = b"SQLite format 3\x00"
WAL_VERSION = 2  # bytes 18 and 19 of the header: 1 rollback journal, 2 write-ahead log
COMMAND_TIMEOUT = 600.0


class IsolationError(Exception):
    """A snapshot or restore that failed; the run stops."""


class Isolation(Protocol):
    """Snapshot the agent's data once, restore it on demand."""

    def snapshot(self) -> None:
        """Keep the state as it is now (on a resumed run: the kept one is used)."""
        ...

    def restore(self) -> None:
        """Put the kept state back."""
        ...


def check_fixture_db(path: Path) -> None:
    """A fixture database must be a SQLite file in rollback-journal mode (a write-ahead log
    keeps committed data outside the file, which a file copy would miss)."""
    try:
        with path.open("rb") as handle:
            header = handle.read(20)
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}", "fixture_db") from None
    if not header.startswith(SQLITE_HEADER):
        raise UserError(f"{path} is not a SQLite database file", "fixture_db")
    if header[18] == WAL_VERSION or header[19] == WAL_VERSION:
        raise UserError(
            f"{path} is in WAL mode, whose log a file copy misses: switch it to "
            "journal_mode=DELETE, or use --snapshot-cmd and --restore-cmd",
            "fixture_db",
        )


@dataclass
class FixtureDb:
    """A SQLite file copied to ``kept`` (in the run directory) and written back in place."""

    path: Path
    kept: Path

    def snapshot(self) -> None:
        """Copy the database into the run directory, unless a first start already did."""
        if self.kept.exists():
            return
        with private_atomic_writer(self.kept) as out, self.path.open("rb") as source:
            shutil.copyfileobj(source, out)

    def restore(self) -> None:
        """Write the kept bytes over the database, in place (same file, so open handles see
        them), and cut it to their length."""
        try:
            with self.kept.open("rb") as source, self.path.open("r+b") as target:
                shutil.copyfileobj(source, target)
                target.truncate()
                target.flush()
                os.fsync(target.fileno())
        except OSError as exc:
            raise IsolationError(f"cannot restore {self.path}: {exc.strerror}") from None


@dataclass
class Commands:
    """The user's snapshot and restore commands, run by the shell."""

    snapshot_cmd: str
    restore_cmd: str
    snapshot_taken: bool = False

    def snapshot(self) -> None:
        """Run the snapshot command (not again on a resumed run: its snapshot stands)."""
        if not self.snapshot_taken:
            _run(self.snapshot_cmd, "--snapshot-cmd")
            self.snapshot_taken = True

    def restore(self) -> None:
        """Run the restore command."""
        _run(self.restore_cmd, "--restore-cmd")


def _run(command: str, flag: str) -> None:
    done = run_shell(command, COMMAND_TIMEOUT)
    if done is None:
        raise IsolationError(f"{flag} did not finish within {COMMAND_TIMEOUT:g} s")
    if done.returncode != 0:
        raise IsolationError(f"{flag} failed {failure(done)}")
