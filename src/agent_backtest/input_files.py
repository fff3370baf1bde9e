"""Reading the files abt is given or left behind, other than traces: settings (abt.toml, targets,
agent configs, tools, prices, owners, exclusion lists, patches, flows, capabilities), benchmark
files and run files.

Every such file goes through here, so each gets the same guards whatever reads it: only a
regular file is opened (a folder, a named pipe or a device is refused before it is opened, so a
FIFO never blocks and ``/dev/zero`` is never read), the size is bounded, text must be UTF-8 (an
error names the byte), and parsed values are bounded in nesting, integer size and strings a JSON
writer can write (no lone surrogates). YAML goes through ``bounded_yaml.BoundedLoader``, the one
YAML loader abt has (at most 100 aliases, so a few hundred bytes never stand for gigabytes).
Every failure is an :class:`InputError`: one line naming the file and the place.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from agent_backtest.errors import InputError
from agent_backtest.formats.limits import MAX_DEPTH, MAX_DOCUMENT_BYTES, json_path, too_deep_at

if TYPE_CHECKING:
    import yaml

MAX_SETTINGS_BYTES = 16 << 20
"""Size of a settings file (TOML, YAML, a JSON document of settings, a list of names): real ones
are kilobytes; a YAML parser needs far more memory than the bytes it reads."""
MIN_INTEGER, MAX_INTEGER = -(1 << 63), (1 << 64) - 1
"""The integers a JSON writer (orjson) can write back: a run records what it read."""
_UTF8_BOM = b"\xef\xbb\xbf"


def checked_regular_file(path: Path, what: str = "file") -> os.stat_result:
    """The status of ``path`` when it is a regular file (a link to one included); else an
    :class:`InputError` saying what it is instead, without opening it."""
    try:
        status = path.stat()
    except FileNotFoundError:
        raise InputError(
            path, None, f"cannot read the {what}: no such {what}; check the path"
        ) from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read the {what}: {exc.strerror}") from None
    _refuse_irregular(path, status.st_mode, what)
    return status


def _refuse_irregular(path: Path, mode: int, what: str) -> None:
    kind = irregular_kind(mode)
    if kind is not None:
        raise InputError(path, None, f"is {kind}, not a {what}: give a regular file")


def irregular_kind(mode: int) -> str | None:
    """What a file of ``mode`` (``st_mode``) is when it is not a regular file (``a folder``,
    ``a named pipe``, ``a device``, ``a socket``); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket"


def open_binary(path: Path, what: str = "file", buffering: int = -1) -> BinaryIO:
    """``path`` opened for reading bytes, once it is known to be a regular file; ``buffering``
    as :func:`open` takes it (a larger buffer for a file read line by line from start to end).

    Opened without blocking, so a file swapped for a named pipe after the check still cannot
    hang the process; the opened file is checked again.
    """
    checked_regular_file(path, what)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise InputError(path, None, f"cannot read the {what}: {exc.strerror}") from None
    try:
        _refuse_irregular(path, os.fstat(fd).st_mode, what)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb", buffering=buffering)


def read_bytes(path: Path, what: str = "file", limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them."""
    with open_binary(path, what) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise InputError(path, None, f"cannot read the {what}: {exc.strerror}") from None
    if len(data) > limit:
        raise InputError(
            path,
            None,
            f"the {what} is more than {limit:,} bytes, more than any real one: "
            "check it is the right file",
        )
    return data


def iter_lines(path: Path, what: str = "file") -> Iterator[tuple[int, bytes]]:
    """(line number, line) for each line of the regular file ``path``, read one at a time;
    a line over :data:`MAX_DOCUMENT_BYTES` is refused by its number."""
    with open_binary(path, what) as handle:
        number = 0
        while line := handle.readline(MAX_DOCUMENT_BYTES + 1):
            number += 1
            if len(line) > MAX_DOCUMENT_BYTES:
                raise InputError(
                    path, f"line {number}", f"longer than {MAX_DOCUMENT_BYTES:,} bytes"
                )
            yield number, line


def decode_text(data: bytes, path: Path, what: str = "file") -> str:
    """``data`` as UTF-8 text (a byte-order mark dropped); else an error naming the byte."""
    try:
        return data.removeprefix(_UTF8_BOM).decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(_UTF8_BOM) if data.startswith(_UTF8_BOM) else 0)
        raise InputError(
            path, f"byte {offset}", f"the {what} is not UTF-8 text: save it as UTF-8"
        ) from None


def read_text(path: Path, what: str = "file", limit: int = MAX_SETTINGS_BYTES) -> str:
    """The regular file ``path`` as UTF-8 text, at most ``limit`` bytes."""
    return decode_text(read_bytes(path, what, limit), path, what)


# -- values ---------------------------------------------------------------------------------


def check_data(value: Any, path: Path, where: str | None = None) -> Any:
    """``value``, parsed from ``path``, when every part of it can be held and written back:
    nested at most :data:`MAX_DEPTH` levels, integers within 64 bits, no lone surrogate in a
    string or key. Else an :class:`InputError` naming the JSON path (after ``where``)."""
    deep = too_deep_at(value, MAX_DEPTH)
    if deep is not None:
        raise InputError(
            path, _at(where, deep), f"value too deep: nested more than {MAX_DEPTH} levels"
        )
    pending: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while pending:
        node, place = pending.pop()
        problem = _unwritable(node)
        if problem is not None:
            raise InputError(path, _at(where, json_path(place)), problem)
        if isinstance(node, dict):
            for key, child in node.items():
                problem = _unwritable(key)
                if problem is not None:
                    raise InputError(path, _at(where, json_path(place)), f"a key: {problem}")
                pending.append((child, (*place, key)))
        elif isinstance(node, list):
            pending.extend((child, (*place, index)) for index, child in enumerate(node))
    return value


def _unwritable(value: Any) -> str | None:
    """Why a scalar could not be written back as JSON, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and not MIN_INTEGER <= value <= MAX_INTEGER:
        return "an integer beyond 64 bits, which abt could not write back"
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"a lone surrogate (\\u{ord(value[exc.start]):04x}) in a string: not text"
    return None


# Every byte a digit 0 and any other byte a space, so that a run of digits is a run of zeros
# that ``bytes.find`` spots at memory speed (a regular expression tries each position in turn,
# fifteen times slower on a 20 KB line).
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_RUN = b"0" * 20
"""A run of digits as long as the largest 64-bit integer, or longer, once translated."""


def has_long_number(data: bytes) -> bool:
    """True when ``data`` holds a run of 20 digits or more: the only JSON text that may hold
    an integer beyond 64 bits."""
    return _LONG_RUN in data.translate(_DIGITS_AS_ZEROS)


def check_json_integers(data: bytes, path: Path, where: str | None = None) -> None:
    """Refuse JSON text holding an integer beyond 64 bits, for text parsed by a reader that
    keeps such integers whole (pydantic's), which nothing could write back or hash later.

    Only text with a run of 20 digits is parsed again to look; the rest costs one scan.
    """
    if not has_long_number(data):
        return
    import json

    try:
        value = json.loads(data)
    except (ValueError, RecursionError):  # not JSON, or beyond any limit: the reader says
        return
    check_data(value, path, where)


def _at(where: str | None, place: str) -> str:
    return f"{where} {place}" if where else place


def parse_json(data: bytes | str, path: Path, where: str | None = None, hint: str = "") -> Any:
    """``data`` as one JSON value within :func:`check_data`'s bounds; a mistake names the line
    and column (or ``where``, for one line of a file), followed by ``hint`` when given."""
    import orjson

    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        place = where or f"line {exc.lineno}, column {exc.colno}"
        raise InputError(path, place, f"not valid JSON: {exc.msg}{hint}") from None
    return check_data(value, path, where)


def load_json(path: Path, what: str = "file", limit: int = MAX_SETTINGS_BYTES) -> Any:
    """The regular file ``path`` as one JSON document."""
    return parse_json(decode_text(read_bytes(path, what, limit), path, what), path)


def parse_toml(text: str, path: Path) -> dict[str, Any]:
    """``text`` as a TOML document within :func:`check_data`'s bounds; every parser error,
    a table nested past what the parser recurses through and an integer past what Python
    converts included, is one :class:`InputError`."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, None, f"not valid TOML: {exc}") from None
    except RecursionError:
        raise InputError(
            path, None, f"not valid TOML: nested more than {MAX_DEPTH} levels"
        ) from None
    except ValueError as exc:  # an integer of thousands of digits
        raise InputError(path, None, f"not valid TOML: {str(exc).split(';')[0]}") from None
    return check_data(data, path)


def load_toml(path: Path, what: str = "file") -> dict[str, Any]:
    """The regular file ``path`` as a TOML document."""
    return parse_toml(read_text(path, what), path)


# -- YAML -----------------------------------------------------------------------------------


def compose_yaml(data: bytes | str, path: Path) -> tuple[yaml.Node | None, Any]:
    """The YAML document ``data``'s node tree (for the lines of its parts) and its value
    within :func:`check_data`'s bounds; (None, None) for an empty document."""
    import yaml

    from agent_backtest.bounded_yaml import BoundedLoader, yaml_error

    try:
        loader = BoundedLoader(data)  # reading starts here: a bad first byte fails here
    except yaml.YAMLError as exc:
        raise yaml_error(path, exc) from None
    try:
        root = loader.get_single_node()
        value = None if root is None else loader.construct_document(root)
    except yaml.YAMLError as exc:
        raise yaml_error(path, exc) from None
    except RecursionError:  # constructing recurses too, should composing ever let one by
        raise InputError(
            path, None, f"value too deep: nested more than {MAX_DEPTH} levels"
        ) from None
    finally:
        loader.dispose()
    return root, check_data(value, path)


def parse_yaml(data: bytes | str, path: Path) -> Any:
    """The YAML document ``data`` as a value within :func:`check_data`'s bounds."""
    return compose_yaml(data, path)[1]


def load_yaml(path: Path, what: str = "file") -> Any:
    """The regular file ``path`` as one YAML document."""
    return parse_yaml(read_text(path, what), path)
