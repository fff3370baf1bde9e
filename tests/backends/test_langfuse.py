"""``abt pull langfuse`` against a server of Langfuse's public API (no Langfuse runs here)
that serves real Langfuse exports: the pulled file gives the units of the exports themselves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.backends.exchange import units_of
from tests.backends.langfuse_server import PUBLIC_KEY, SECRET_KEY, LangfuseServer
from tests.conftest import FIXTURES
from tests.servers import serve_in_thread, stop_serving

EXPORTS = sorted((FIXTURES / "frameworks" / "langfuse").glob("*.trace.json"))
FAST = ("--requests-per-second", "100")
KEYS = {"LANGFUSE_PUBLIC_KEY": PUBLIC_KEY, "LANGFUSE_SECRET_KEY": SECRET_KEY}


def abt(cwd: Path, env: dict[str, str], *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_backtest.cli", *map(str, args)],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def langfuse() -> Iterator[LangfuseServer]:
    server = LangfuseServer([json.loads(path.read_text()) for path in EXPORTS])
    serve_in_thread(server)
    yield server
    stop_serving(server)


def test_pulled_traces_give_the_units_of_the_exports(
    langfuse: LangfuseServer, tmp_path: Path
) -> None:
    env = {**KEYS, "LANGFUSE_HOST": langfuse.url}
    result = abt(tmp_path, env, "pull", "langfuse", "-o", "traces.jsonl", *FAST, "--page-size", "3")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"wrote {len(EXPORTS)} traces to traces.jsonl (complete)\n"
    pulled = tmp_path / "traces.jsonl"
    lines = [json.loads(line) for line in pulled.read_text().splitlines()]
    assert sorted(line["trace"]["id"] for line in lines) == sorted(
        json.loads(path.read_text())["trace"]["id"] for path in EXPORTS
    )
    # one file of the exports, as sessions may run over several traces
    exports = tmp_path / "exports.jsonl"
    exports.write_text("".join(json.dumps(json.loads(p.read_text())) + "\n" for p in EXPORTS))
    expected = units_of(exports)
    assert len(expected) > 10 and units_of(pulled) == expected
    assert langfuse.requests.count(langfuse.requests[0]) == 2  # the 429 was retried


def test_wrong_keys_are_one_line_without_the_secret(
    langfuse: LangfuseServer, tmp_path: Path
) -> None:
    wrong = {**KEYS, "LANGFUSE_SECRET_KEY": "sk-lf-WRONGWRONG0123456789"}
    result = abt(tmp_path, wrong, "pull", "langfuse", "--endpoint", langfuse.url, "-o", "t.jsonl")
    assert result.returncode == 2
    assert result.stderr == (
        f"abt: error: Langfuse at {langfuse.url} refused the credentials (HTTP 401): set "
        "LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY to a key pair of this project\n"
    )
    assert "WRONG" not in result.stdout + result.stderr


def test_since_and_until_keep_the_traces_of_the_window(
    langfuse: LangfuseServer, tmp_path: Path
) -> None:
    window = ("--since", "2025-08-01", "--until", "2025-09-01T00:00:00+00:00")
    env = {**KEYS, "LANGFUSE_BASE_URL": langfuse.url}
    result = abt(tmp_path, env, "pull", "langfuse", "-o", "august.jsonl", *FAST, *window)
    assert result.returncode == 0, result.stderr
    stamps = [
        json.loads(line)["trace"]["timestamp"]
        for line in (tmp_path / "august.jsonl").read_text().splitlines()
    ]
    in_august = [
        json.loads(path.read_text())["trace"]["timestamp"]
        for path in EXPORTS
        if json.loads(path.read_text())["trace"]["timestamp"].startswith("2025-08")
    ]
    assert stamps == sorted(in_august) and len(stamps) == 6
    again = abt(
        tmp_path, env, "pull", "langfuse", "-o", "august.jsonl", *FAST, "--since", "2025-07-01"
    )
    assert again.returncode == 2
    assert again.stderr.startswith("abt: error: --output: august.jsonl holds a pull of another ")


def test_a_pull_that_finished_adds_nothing_when_run_again(
    langfuse: LangfuseServer, tmp_path: Path
) -> None:
    env = {**KEYS, "LANGFUSE_HOST": langfuse.url}
    first = abt(tmp_path, env, "pull", "langfuse", "-o", "all.jsonl", *FAST)
    before = (tmp_path / "all.jsonl").read_bytes()
    again = abt(tmp_path, env, "pull", "langfuse", "-o", "all.jsonl", *FAST)
    assert first.returncode == again.returncode == 0, again.stderr
    assert again.stdout == f"wrote {len(EXPORTS)} traces to all.jsonl (resumed, added 0)\n"
    assert (tmp_path / "all.jsonl").read_bytes() == before


def test_a_mistyped_time_is_one_line(tmp_path: Path) -> None:
    env = {**KEYS, "LANGFUSE_HOST": "http://127.0.0.1:9"}
    result = abt(tmp_path, env, "pull", "langfuse", "-o", "t.jsonl", "--since", "last week")
    assert result.returncode == 2
    assert result.stderr == (
        "abt: error: --since: 'last week' is not an ISO 8601 time, such as 2026-05-01 or "
        "2026-05-01T12:00Z\n"
    )


def test_a_broken_progress_file_is_one_line(langfuse: LangfuseServer, tmp_path: Path) -> None:
    (tmp_path / "t.jsonl.pull.json").write_text("{torn")
    env = {**KEYS, "LANGFUSE_HOST": langfuse.url}
    result = abt(tmp_path, env, "pull", "langfuse", "-o", "t.jsonl", *FAST)
    assert result.returncode == 2
    assert result.stderr == (
        "abt: error: t.jsonl.pull.json: is not a pull state: remove it and pull again\n"
    )
