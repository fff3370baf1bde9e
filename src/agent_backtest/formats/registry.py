"""The readers by format name, format detection by content, and the input files they read.

Readers open an input more than once (to sniff, then to read), so an input that can be read only
once (standard input as ``-``, a pipe such as ``<(cat file)``, a FIFO) is first copied, up to
:data:`~agent_backtest.formats.limits.MAX_DOCUMENT_BYTES`, into a private temporary file that
is removed when the process ends. Devices and sockets are refused: ``/dev/zero`` never ends.
"""

from __future__ import annotations

import atexit
import os
import select
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from agent_backtest.errors import InputError
from agent_backtest.formats.base import Reader
from agent_backtest.formats.limits import check_size
from agent_backtest.registry import Registry

READER_GROUP = "agent_backtest.readers"
# Each format and its reader (a module or object with FORMAT, sniff and read: see
# formats.base.Reader). Sniff order matters: the most specific markers first; the readers that
# installed packages add are sniffed after these, in the order of their names.
READERS = Registry(
    READER_GROUP,
    "format",
    {
        "canonical": "agent_backtest.formats.canonical",
        "otlp": "agent_backtest.formats.otlp",
        "langfuse": "agent_backtest.formats.langfuse",
        "inspect": "agent_backtest.formats.inspect_log",
        "tau2_bench": "agent_backtest.formats.tau2_bench",
        "tau_bench": "agent_backtest.formats.tau_bench",
        "session_steps": "agent_backtest.formats.session_steps",
        "openhands": "agent_backtest.formats.openhands",
        "swe_agent": "agent_backtest.formats.swe_agent",
        "chat_log": "agent_backtest.formats.chat_log",
        "cassette": "agent_backtest.formats.cassette",
    },
    f"install a package that adds one (entry point group {READER_GROUP})",
    contract=("FORMAT", "sniff", "read"),
)
HEAD_BYTES = 64 * 1024
STDIN = Path("-")
WRITER_WAIT_SECONDS = 10.0  # how long a FIFO may go without a writer before it is refused
CHUNK = 1 << 20


def format_names() -> list[str]:
    """The names ``--format`` accepts: the built-in formats, then the installed ones."""
    return READERS.names()


def reader_for(name: str) -> Reader:
    """The reader of a named format."""
    return READERS.load(name, "format")


def detect(path: Path) -> Reader:
    """The reader whose sniff recognises the start of the file: the built-in readers first,
    then those of installed packages (read only when no built-in claims the file)."""
    head = file_head(path)
    for names in (READERS.built_in_names, READERS.installed_names):
        for name in names():
            reader = reader_for(name)
            if reader.sniff(head, path):
                return reader
    raise InputError(
        path,
        None,
        "cannot tell the format from the content; pass --format "
        "(one of: " + ", ".join(format_names()) + ")",
    )


def file_head(path: Path) -> str:
    """The start of a file as text, as the readers' sniffs see it."""
    try:
        with path.open("rb") as handle:
            return handle.read(HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None


def check_forced_format(reader: Reader, path: Path) -> None:
    """Refuse a file that ``--format`` named a format for, when its reader read nothing from it
    and does not recognise it either: one line saying what the format expects and what the file
    looks like, never a run with every record skipped."""
    if reader.sniff(file_head(path), path):
        return  # the file is of this format: it holds nothing usable, and the skips say why
    try:
        found = detect(path).FORMAT
        holds = f"looks like {found}: leave out --format or pass --format {found}"
    except InputError:
        holds = "is in no format abt reads"
    raise InputError(
        path,
        f"--format {reader.FORMAT}",
        f"expects {expectation(reader)}; nothing was read, the file {holds}",
    )


def expectation(reader: Reader) -> str:
    """What a format's files hold, in a few words: the reader's ``EXPECTS``, else the opening
    sentence of its module's docstring (``Reader of …``)."""
    described = getattr(reader, "EXPECTS", None) or (getattr(reader, "__doc__", None) or "")
    first = described.strip().split("\n")[0].removeprefix("Reader of ").rstrip(".")
    return first.replace("``", "") or f"a {reader.FORMAT} file"


_COPIES: dict[Path, Path] = {}  # each pipe given is read once, whoever asks for it first


def local_input(path: Path) -> Path:
    """``path`` when it is a regular file (or a missing one, for the reader to name), else a
    private copy of what a pipe or standard input gives (the same copy every time it is asked
    for); devices and sockets are refused."""
    if path in _COPIES:
        return _COPIES[path]
    if path == STDIN:
        _COPIES[path] = _spool_stdin()
        return _COPIES[path]
    try:
        mode = path.stat().st_mode
    except OSError:
        return path
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return path
    if not stat.S_ISFIFO(mode):
        kind = "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket"
        raise InputError(path, None, f"is {kind}, not a file of traces")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None
    try:
        _wait_for_data(fd, path)
        os.set_blocking(fd, True)
        _COPIES[path] = _spool(lambda size: os.read(fd, size), path.name, path)
    finally:
        os.close(fd)
    return _COPIES[path]


def _spool_stdin() -> Path:
    """A private copy of standard input (``-``)."""
    stream = sys.stdin.buffer if sys.stdin is not None else None
    if stream is None or sys.stdin.isatty():
        raise InputError(STDIN, None, "standard input is a terminal: pipe a file into it")
    return _spool(stream.read, "stdin", STDIN)


def _spool(read: Callable[[int], bytes], name: str, shown: Path) -> Path:
    """What ``read`` gives until its end, in a 0600 file of a 0700 temporary folder removed
    when the process ends."""
    folder = Path(tempfile.mkdtemp(prefix="abt-input-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    copy = folder / name
    size = 0
    with open(os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
        while chunk := read(CHUNK):
            size += len(chunk)
            check_size(size, shown, "the input")
            out.write(chunk)
    return copy


def _wait_for_data(fd: int, shown: Path) -> None:
    """Return once ``fd`` has data or its end; a FIFO nobody writes to is refused."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    if not poller.poll(WRITER_WAIT_SECONDS * 1000):
        raise InputError(
            shown,
            None,
            f"nothing written to it within {WRITER_WAIT_SECONDS:g} s: is a writer attached?",
        )
