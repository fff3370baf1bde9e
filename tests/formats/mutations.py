"""Hostile variants of the real trace fixtures, for the readers' fuzz test and benchmark.

Each mutation is a pure function of a seed and a fixture's bytes: truncation, byte flips, type
swaps of one value, deep nesting, huge strings and numbers, other encodings, YAML aliases. The
same seed always gives the same bytes, so a failure found once is found again.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES

FIXTURE_FORMATS: dict[str, str] = {
    "canonical/sessions.jsonl": "canonical",
    "cassette/test_chat_completion_tool_calls_with_content.yaml": "cassette",
    "chat_log/example.jsonl": "chat_log",
    "otlp/current.json": "otlp",
    "otlp/events.jsonl": "otlp",
    "otlp/openinference.jsonl": "otlp",
    "session_steps/example.json": "session_steps",
    "tau_airline/two_trajectories.json": "tau_bench",
    "traces/koog-2025-08-26.trace.json": "langfuse",
    "traces/microsoft-agent-2025-12-17.trace.json": "langfuse",
    "traces/otlp_canonical_trace.json": "otlp",
}
PLACEHOLDER = "__abt_fuzz_value__"


@dataclass(frozen=True)
class Case:
    """One mutated input: which fixture, which mutation, and the bytes to read."""

    fixture: str
    mutation: str
    data: bytes

    @property
    def format(self) -> str:
        """The format of the fixture the case came from."""
        return FIXTURE_FORMATS[self.fixture]

    @property
    def suffix(self) -> str:
        """The fixture's file extension, which some sniffs look at."""
        return Path(self.fixture).suffix


def fixture_bytes() -> dict[str, bytes]:
    """The fixtures' contents by name."""
    return {name: (FIXTURES / name).read_bytes() for name in FIXTURE_FORMATS}


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data))]


def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    mutable = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        mutable[rng.randrange(len(mutable))] = rng.randrange(256)
    return bytes(mutable)


def hostile_value(rng: random.Random) -> str:
    """JSON text of a value no reader expects: another type, huge, or deeply nested."""
    depth = rng.choice([50, 300, 1000, 5000, 50_000])
    choices = [
        "null", "0", "-1", "true", '""', "[]", "{}", '"x"', "1.5e308", "-0.0",
        "1" * rng.choice([30, 400, 5001]),
        "1e99999",
        json.dumps("x" * rng.choice([10_000, 300_000, 2_000_000])),
        json.dumps("\x1b]0;owned\x07\x1b[2J\u202e" * 50),
        "[" * depth + "]" * depth,
        '{"a":' * depth + "1" + "}" * depth,
        json.dumps([{"role": "user"}] * 200),
    ]  # fmt: skip
    return rng.choice(choices)


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path inside a parsed JSON value (not recursive, so any depth is walked)."""
    found, stack = [], [(value, path)]
    while stack:
        node, where = stack.pop()
        found.append(where)
        if isinstance(node, dict):
            stack.extend((child, (*where, key)) for key, child in node.items())
        elif isinstance(node, list):
            stack.extend((child, (*where, index)) for index, child in enumerate(node))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = new
    return value


def _swap_in_document(rng: random.Random, text: str) -> str:
    document = json.loads(text)
    path = rng.choice(_nodes(document))
    swapped = _replace(document, path, PLACEHOLDER)
    return json.dumps(swapped).replace(json.dumps(PLACEHOLDER), hostile_value(rng), 1)


def swap_value(rng: random.Random, data: bytes) -> bytes:
    """One value, anywhere in the document (or one line of a JSON Lines file), replaced."""
    text = data.decode("utf-8")
    if text.lstrip().startswith(("{", "[")) and "\n{" not in text.strip():
        return _swap_in_document(rng, text).encode()
    lines = text.splitlines()
    if all(line.strip().startswith(("{", "[")) for line in lines if line.strip()):
        index = rng.choice([i for i, line in enumerate(lines) if line.strip()])
        lines[index] = _swap_in_document(rng, lines[index])
        return ("\n".join(lines) + "\n").encode()
    return yaml_swap(rng, data)


def yaml_swap(rng: random.Random, data: bytes) -> bytes:
    """A YAML scalar line given a hostile value (JSON text is YAML flow text)."""
    lines = data.decode("utf-8").splitlines()
    scalars = [i for i, line in enumerate(lines) if ": " in line]
    index = rng.choice(scalars)
    key = lines[index].split(": ", 1)[0]
    lines[index] = f"{key}: {hostile_value(rng)}"
    return ("\n".join(lines) + "\n").encode()


def wrap_deep(rng: random.Random, data: bytes) -> bytes:
    depth = rng.choice([100, 260, 1000, 3000])
    body = data.decode("utf-8").strip()
    if "\n" in body and not body.startswith(("{", "[")):
        return ("[" * depth + "1" + "]" * depth + "\n").encode() + data
    first, _, rest = body.partition("\n")
    return ('{"a":' * depth + first + "}" * depth + "\n" + rest).encode()


def reencode(rng: random.Random, data: bytes) -> bytes:
    text = data.decode("utf-8")
    encoding = rng.choice(["utf-16", "utf-32", "utf-8-sig", "latin-1", "cp1252", "invalid"])
    if encoding == "invalid":
        cut = rng.randrange(len(data))
        return (
            data[:cut]
            + rng.choice([b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\x00"])
            + data[cut:]
        )
    return text.encode(encoding, errors="replace")


def yaml_aliases(rng: random.Random, data: bytes) -> bytes:
    """The billion-laughs alias bomb in front of (or instead of) a cassette."""
    levels = rng.choice([4, 9, 12])
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels):
        previous = f"*a{level - 1}"
        lines.append(f"a{level}: &a{level} [{', '.join([previous] * 9)}]")
    bomb = "\n".join(lines) + "\n"
    return (bomb + data.decode("utf-8")).encode() if rng.random() < 0.5 else bomb.encode()


def blank(rng: random.Random, data: bytes) -> bytes:
    return rng.choice([b"", b"\n\n", b"   ", b"\x00" * 64, b"null", b"[]", b"{}", b"\xef\xbb\xbf"])


MUTATIONS: dict[str, Callable[[random.Random, bytes], bytes]] = {
    "truncate": truncate,
    "flip_bytes": flip_bytes,
    "swap_value": swap_value,
    "wrap_deep": wrap_deep,
    "reencode": reencode,
    "yaml_aliases": yaml_aliases,
    "blank": blank,
}


def mutate(seed: int, fixture: str, contents: dict[str, bytes]) -> Case:
    """The case ``seed`` makes of ``fixture``."""
    rng = random.Random(seed)
    name = rng.choice(sorted(MUTATIONS))
    if name == "yaml_aliases" and FIXTURE_FORMATS[fixture] != "cassette":
        name = "swap_value"
    return Case(fixture, name, MUTATIONS[name](rng, contents[fixture]))


def read_everything(path: Path, format: str | None) -> str:
    """Read ``path`` as the command line would (sessions, then units): ``ok``, or the one line
    a user error shows. Any other exception is a bug and propagates."""
    from agent_backtest.api import ReadingOptions, build_units
    from agent_backtest.errors import UserError

    try:
        for _ in build_units(path, reading=ReadingOptions(format=format)):
            pass
    except UserError as error:
        return f"refused: {error}"
    return "ok"
