"""Private, atomic file writes: what the tool writes holds user utterances."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


@contextmanager
def private_atomic_writer(path: Path) -> Iterator[BinaryIO]:
    """Write ``path`` through a 0600 temporary file renamed into place when the block succeeds.

    A crash or error inside the block leaves any earlier file at ``path`` untouched. A missing
    parent directory is created with mode 0700.
    """
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
