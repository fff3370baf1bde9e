"""Private, atomic file writes: what the tool writes holds user utterances.

A file is written through a temporary ``.NAME.XXXX.part`` beside it, locked by its writer for as
long as it is open. A writer killed before its rename leaves that file behind; the next write of
the same file removes every such leftover whose lock nobody holds (a live writer's is held).
"""

from __future__ import annotations

import fcntl
import glob
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

PRIVATE_DIRECTORY = 0o700


def private_mkdir(path: Path) -> None:
    """Make ``path`` and each missing parent with mode 0700, whatever the umask.

    ``Path.mkdir(parents=True)`` gives the parents the umask's mode (0777 under ``umask 000``);
    every folder made here is chmod-ed after it is made, as the umask applies to ``mkdir``.
    """
    missing = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIRECTORY)
        except FileExistsError:  # made meanwhile by another process
            continue
        os.chmod(folder, PRIVATE_DIRECTORY)
    if not path.is_dir():
        raise NotADirectoryError(20, "Not a directory", str(path))


def check_writable(path: Path, parameter: str) -> None:
    """Refuse a file that could not be written, before anything is paid for or written: a
    folder in its place, a file where a parent folder should be, or a folder that takes no new
    file (tried for real: permission bits say nothing to root, nor about /proc)."""
    from agent_backtest.errors import UserError

    if path.is_dir():
        raise UserError(f"{path} is a folder: name a file to write", parameter)
    folder = next((p for p in path.absolute().parents if p.exists()), Path("/"))
    try:
        if not folder.is_dir():
            raise NotADirectoryError(20, "Not a directory", str(folder))
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise UserError(
            f"cannot write {path} ({exc.strerror}): name a file in a folder you can write",
            parameter,
        ) from None


@contextmanager
def private_atomic_writer(path: Path, sync: bool = True) -> Iterator[BinaryIO]:
    """Write ``path`` through a 0600 temporary file renamed into place when the block succeeds.

    A crash or error inside the block leaves any earlier file at ``path`` untouched. A missing
    parent directory is created with mode 0700; a killed writer's leftover is removed. The file
    is fsync-ed before the rename unless ``sync`` is false: a killed process then still leaves
    the old file or the new one whole, and only a crash of the machine may lose the new one.
    """
    private_mkdir(path.parent)
    remove_stale_parts(path)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # tells a later writer this part is not stale
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
            os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def remove_stale_parts(path: Path) -> list[Path]:
    """Remove the temporary files that killed writers of ``path`` left; the ones removed."""
    removed = []
    pattern = os.path.join(glob.escape(str(path.parent)), f".{glob.escape(path.name)}.*.part")
    for leftover in map(Path, glob.glob(pattern)):
        if _unlocked(leftover):
            leftover.unlink(missing_ok=True)
            removed.append(leftover)
    return removed


def _unlocked(part: Path) -> bool:
    """True when no live writer holds ``part``'s lock (it would hold it until its rename)."""
    try:
        fd = os.open(part, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True
