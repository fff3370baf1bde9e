"""Hostile inputs meet limits with a clear error, never a crash, a hang or gigabytes of memory."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from agent_backtest.api import build_units
from agent_backtest.errors import InputError
from agent_backtest.formats import registry
from agent_backtest.formats.limits import MAX_DEPTH, quote, too_deep_at
from tests.conftest import FIXTURES

CHAT_LOG = FIXTURES / "chat_log" / "example.jsonl"
CASSETTE = FIXTURES / "cassette" / "test_chat_completion_tool_calls_with_content.yaml"


def read(path: Path, format: str | None = None) -> list:
    from agent_backtest.api import ReadingOptions

    return list(build_units(path, reading=ReadingOptions(format=format)))


def abt(*args: object, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_backtest.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,  # type: ignore[arg-type]
    )


def nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def test_a_deep_document_is_refused_with_its_path(tmp_path: Path) -> None:
    document = json.loads((FIXTURES / "session_steps" / "example.json").read_text())
    holder = document if isinstance(document, dict) else document[0]
    holder["Deep"] = "placeholder"
    text = json.dumps(document).replace('"placeholder"', nested(300), 1)
    path = tmp_path / "deep.json"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read(path)
    assert caught.value.message == f"value too deep: nested more than {MAX_DEPTH} levels"
    assert caught.value.location is not None and caught.value.location.startswith("$")
    assert ".Deep.a.a.a" in caught.value.location and caught.value.location.endswith("…")


def test_a_deep_json_line_is_refused_with_its_line(tmp_path: Path) -> None:
    lines = CHAT_LOG.read_text().splitlines()
    lines.insert(2, json.dumps({"request": {"messages": []}})[:-1] + f', "x": {nested(500)}}}')
    path = tmp_path / "deep.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as caught:
        read(path, "chat_log")
    assert str(caught.value).startswith(f"{path}: line 3 $.x.a.a")


def test_deep_values_inside_json_strings_are_refused_not_a_crash(tmp_path: Path) -> None:
    record = json.loads(CHAT_LOG.read_text().splitlines()[0])
    call = record["response"]["choices"][0]["message"]["tool_calls"][0]
    call["function"]["arguments"] = "[" * 900 + "]" * 900  # orjson parses it; recursion fails
    path = tmp_path / "arguments.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(InputError, match="value too deep"):
        read(path)


def test_the_walk_measures_any_depth_without_recursion() -> None:
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert too_deep_at(deep) == "$" + "[0]" * 12 + "…"
    assert too_deep_at({"a": [1, {"b": 2}]}) is None


ALIAS_BOMB = "\n".join(
    ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 9)]
    + ["interactions:", "- request: {uri: 'https://x/v1/chat/completions', body: *a8}", ""]
)


def limited_memory() -> None:
    """In the child: at most 1 GB of address space, so a blow-up fails instead of swapping."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def test_a_yaml_alias_bomb_is_refused_within_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(ALIAS_BOMB)
    result = abt("ingest", path, "--format", "cassette", preexec_fn=limited_memory)
    assert result.returncode == 2, result.stderr
    assert "alias bomb" in result.stderr and "Traceback" not in result.stderr


def test_a_huge_yaml_integer_is_refused_with_its_line(tmp_path: Path) -> None:
    lines = CASSETTE.read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if line.strip().startswith("code:"))
    lines[index] = lines[index].split(":")[0] + ": " + "7" * 5001
    path = tmp_path / "huge.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="an integer of more than 100 digits") as caught:
        read(path)
    assert caught.value.location is not None and caught.value.location.startswith(
        f"line {index + 1}"
    )


def test_a_huge_field_is_quoted_short_in_what_is_printed(tmp_path: Path) -> None:
    record = json.loads(CHAT_LOG.read_text().splitlines()[0])
    record["request"]["messages"][0]["role"] = "x" * 8_000_000
    path = tmp_path / "huge.jsonl"
    path.write_text(json.dumps(record) + "\n")
    result = abt("ingest", path, "--format", "chat_log")
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert len(result.stdout) + len(result.stderr) < 5_000
    assert "characters)" in result.stdout
    assert quote("y" * 1000) == repr("y" * 200) + "… (1,000 characters)"


def test_devices_are_refused_and_pipes_and_standard_input_are_read(tmp_path: Path) -> None:
    result = abt("units", "/dev/zero", "-o", tmp_path / "u.jsonl")
    assert result.returncode == 2 and "/dev/zero: is a device" in result.stderr
    piped = subprocess.run(
        ["bash", "-c", f'"{sys.executable}" -m agent_backtest.cli units <(cat "{CHAT_LOG}") -o -'],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert piped.returncode == 0, piped.stderr
    assert len(piped.stdout.splitlines()) == 7
    stdin = abt("units", "-", "-o", "-", input=CHAT_LOG.read_text())
    assert stdin.returncode == 0 and len(stdin.stdout.splitlines()) == 7


def test_a_fifo_nobody_writes_to_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry, "WRITER_WAIT_SECONDS", 0.2)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"nothing written to it within 0\.2 s"):
        read(fifo)


def test_a_document_larger_than_the_limit_is_refused_by_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_backtest.formats import jsonio

    monkeypatch.setattr(jsonio, "check_size", _tiny_limit)
    path = tmp_path / "big.json"
    path.write_bytes((FIXTURES / "otlp" / "current.json").read_bytes())
    with pytest.raises(InputError, match="more than the 1,000 a reader takes whole"):
        read(path, "otlp")


def _tiny_limit(size: int, file: object, what: str = "the file") -> None:
    from agent_backtest.formats import limits

    original = limits.MAX_DOCUMENT_BYTES
    limits.MAX_DOCUMENT_BYTES = 1000
    try:
        limits.check_size(size, file, what)  # type: ignore[arg-type]
    finally:
        limits.MAX_DOCUMENT_BYTES = original


def test_a_string_longer_than_the_limit_is_refused_with_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_backtest.formats import limits

    monkeypatch.setattr(limits, "MAX_STRING_CHARS", 1000)
    record = json.loads(CHAT_LOG.read_text().splitlines()[0])
    record["request"]["messages"][1]["content"] = "z" * 5000
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(InputError, match="string too long: more than 1,000 characters") as caught:
        read(path, "chat_log")
    assert caught.value.location == "line 1 $.request.messages[1].content"
