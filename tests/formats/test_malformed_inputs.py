"""Malformed and truncated input for every reader: no traceback escapes, errors say where.

Each format starts from a valid seed file; hypothesis truncates it, overwrites bytes, or changes
one value deep inside its parsed structure (to a wrong type, or removes it). Reading must then
finish (skipping what it cannot use, each skip with a location) or stop with an InputError that
names the file and a location. Any other exception is a bug.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_backtest.errors import InputError
from agent_backtest.formats import ReadOptions, SessionStream, format_names
from agent_backtest.units import AgentConfig, units_from_session
from tests.formats.seeds import SEEDS

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**20),
    st.floats(),
    st.text(max_size=5),
    st.just([]),
    st.just({}),
    st.just([1, "x"]),
    st.just({"role": 3}),
)


def check_reads_or_fails_cleanly(data: bytes, format: str, suffix: str) -> None:
    """Read ``data`` as ``format`` normally and strictly; only clean outcomes are allowed."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"input{suffix}"
        path.write_bytes(data)
        for strict in (False, True):
            stream = SessionStream([path], ReadOptions(strict=strict), format=format)
            try:
                sessions = list(stream)
            except InputError as exc:
                assert exc.location, f"error without a location: {exc}"
                assert str(path) in str(exc)
                continue
            for session in sessions:
                list(units_from_session(session, AgentConfig()))
            for example in stream.summaries[0].skips.examples:
                assert example.location and example.reason


CASES = [
    pytest.param(format, path, id=path.name)
    for format, paths in sorted(SEEDS.items())
    for path in paths
]


def test_every_format_has_a_seed() -> None:
    assert set(SEEDS) == set(format_names())


@pytest.mark.parametrize(("format", "path"), CASES)
@SETTINGS
@given(data=st.data())
def test_truncated_input(format: str, path: Path, data: st.DataObject) -> None:
    seed = path.read_bytes()
    cut = data.draw(st.integers(0, len(seed) - 1))
    check_reads_or_fails_cleanly(seed[:cut], format, path.suffix)


@pytest.mark.parametrize(("format", "path"), CASES)
@SETTINGS
@given(data=st.data())
def test_overwritten_bytes(format: str, path: Path, data: st.DataObject) -> None:
    seed = bytearray(path.read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(seed) - 1))
        junk = data.draw(
            st.binary(min_size=1, max_size=6)
            | st.sampled_from(
                [b"{", b"}", b"[", b"]", b'"', b",", b":", b"null", b"\n", b"-1", b"\xff"]
            )
        )
        seed[at : at + len(junk)] = junk
    check_reads_or_fails_cleanly(bytes(seed), format, path.suffix)


@pytest.mark.parametrize(("format", "path"), CASES)
@SETTINGS
@given(data=st.data())
def test_mistyped_or_missing_field(format: str, path: Path, data: st.DataObject) -> None:
    documents = parse_seed(path)
    which = data.draw(st.integers(0, len(documents) - 1))
    documents[which] = mutate(documents[which], data)
    check_reads_or_fails_cleanly(serialise(documents, path), format, path.suffix)


def parse_seed(path: Path) -> list[Any]:
    """The seed's documents: one per line for JSONL, else the single document."""
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        return [yaml.safe_load(text)]
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(text)]


def serialise(documents: list[Any], path: Path) -> bytes:
    if path.suffix in (".yaml", ".yml"):
        return yaml.safe_dump(documents[0]).encode()
    if path.suffix == ".jsonl":
        return b"".join(json.dumps(d).encode() + b"\n" for d in documents)
    return json.dumps(documents[0], indent=1).encode()


def mutate(document: Any, data: st.DataObject) -> Any:
    """Walk to a random node and replace it with an odd value, or drop it from its parent."""
    parent, key = None, None
    node = document
    for _ in range(data.draw(st.integers(0, 12))):
        if isinstance(node, dict) and node:
            parent, key = node, data.draw(st.sampled_from(sorted(node)))
        elif isinstance(node, list) and node:
            parent, key = node, data.draw(st.integers(0, len(node) - 1))
        else:
            break
        node = parent[key]
    if parent is None:
        return data.draw(ODD_VALUES)
    if isinstance(parent, dict) and data.draw(st.booleans()):
        del parent[key]
    else:
        parent[key] = data.draw(ODD_VALUES)
    return document
