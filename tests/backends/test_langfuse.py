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
    result = abt(tmp_path, env, "pull", "langfuse", "-o", "traces.jsonl", "--page-size", "3")
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
