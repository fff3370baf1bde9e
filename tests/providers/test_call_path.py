"""The one call path counts every request it sends, and a cache that fails never stops it."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import stat
import subprocess
import sys
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from agent_backtest.errors import UserError
from agent_backtest.providers import (
    CallCounters,
    CallPolicy,
    CredentialCommand,
    ModelClient,
    ProviderSettings,
    ResponseCache,
)
from agent_backtest.providers.cache import FILE_NAME, CacheWarning
from agent_backtest.providers.openai import OpenAIProvider
from agent_backtest.trace import LLMRequest, Message, sha256_of
from tests.conftest import ROOT, TAU_TOOLS, TAU_TRAJECTORIES
from tests.fake_openai import FakeOpenAI
from tests.servers import serving

FAST = CallPolicy(timeout=1.0, max_retries=3, backoff_initial=0.0)


def request(text: str) -> LLMRequest:
    return LLMRequest(model="gpt-4o", messages=[Message(role="user", content=text)])


def client(
    server: FakeOpenAI, key: str = "sk-test-key", connections: int = 8, **kwargs: object
) -> ModelClient:
    settings = ProviderSettings(type="openai", base_url=server.base_url)
    provider = OpenAIProvider("openai", settings, key, connections)
    return ModelClient(provider, FAST, **kwargs)  # type: ignore[arg-type]


def ask(model_client: ModelClient, *texts: str) -> list:
    async def go() -> list:
        try:
            return list(
                await asyncio.gather(*(model_client.generate(request(t), "m", 0) for t in texts))
            )
        finally:
            await model_client.provider.aclose()

    return asyncio.run(go())


@pytest.fixture
def locked_cache(tmp_path: Path) -> Iterator[Path]:
    """A cache directory whose database another connection holds the write lock of."""
    directory = tmp_path / "cache"
    ResponseCache(directory).close()
    holder = sqlite3.connect(directory / FILE_NAME, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield directory
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_every_request_is_counted_retries_included() -> None:
    with FakeOpenAI() as server:
        server.faults["flaky"] = ["500", "429", "ok"]
        server.faults["down"] = ["500"] * 10
        model_client = client(server)
        flaky, down = ask(model_client, "flaky", "down")
        sent = server.total
    assert (flaky.attempts, down.attempts) == (3, 4)
    counters = model_client.counters
    assert counters.calls == sent == 7
    assert counters.retries == 2 + 3
    assert dict(counters.errors) == {"http_5xx": 1}


def test_the_request_sent_again_after_a_credential_refresh_is_counted() -> None:
    with FakeOpenAI(api_key="fresh-key") as server:
        model_client = client(
            server, key="stale-key", credentials=CredentialCommand("echo fresh-key")
        )
        (outcome,) = ask(model_client, "q")
        sent = server.total
    assert outcome.response is not None
    assert outcome.attempts == sent == 2
    assert model_client.counters.calls == 2
    assert model_client.counters.credential_refreshes == 1
    assert model_client.counters.retries == 0


def test_a_snapshot_is_the_counts_at_that_moment() -> None:
    with FakeOpenAI() as server:
        model_client = client(server)

        async def one_then_another() -> CallCounters:
            try:
                await model_client.generate(request("one"), "m", 0)
                snapshot = model_client.counters.snapshot()
                await model_client.generate(request("two"), "m", 0)
                return snapshot
            finally:
                await model_client.provider.aclose()

        before = asyncio.run(one_then_another())
    after = model_client.counters
    assert before.calls == 1 and after.calls == 2
    assert after.changes > before.changes
    assert after.snapshot().changes == after.changes
    assert before.as_dict() == {
        "calls": 1,
        "cache_hits": 0,
        "retries": 0,
        "credential_refreshes": 0,
        "input_tokens": before.input_tokens,
        "output_tokens": 12,
        "errors": {},
        "cache_write_errors": 0,
        "model_load_seconds": 0.0,
    }


def test_an_unchanged_count_leaves_the_change_counter_alone() -> None:
    counters = CallCounters()
    counters.count_usage(None)
    assert counters.changes == 0
    counters.count_error("timeout")
    assert counters.changes == 1 and counters.snapshot().errors == {"timeout": 1}


def test_a_cache_that_cannot_store_is_counted_warned_once_and_the_answers_still_come(
    locked_cache: Path,
) -> None:
    with FakeOpenAI() as server, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = ResponseCache(locked_cache)
        model_client = client(server, cache=cache)
        outcomes = ask(model_client, "a", "b", "c")
    assert all(o.response is not None and o.error is None for o in outcomes)
    assert model_client.counters.cache_write_errors == 3
    messages = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(messages) == 1
    assert "could not be stored (database is locked)" in messages[0]
    assert str(locked_cache) in messages[0]


def test_a_new_cache_is_private_and_a_shared_one_is_warned_about(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ResponseCache(tmp_path / "new" / "cache").close()
        shared = tmp_path / "shared"
        shared.mkdir(mode=0o755)
        os.chmod(shared, 0o755)
        ResponseCache(shared).close()
    assert stat.S_IMODE((tmp_path / "new" / "cache").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new" / "cache" / FILE_NAME).stat().st_mode) == 0o600
    assert [str(w.message) for w in caught] == [
        f"response cache {shared} is open to other users (mode 0755) and holds prompts and "
        f"answers: chmod 700 {shared}"
    ]


def test_a_cache_that_cannot_be_opened_names_the_setting(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(UserError) as raised:
        ResponseCache(blocker / "cache")
    assert raised.value.parameter == "cache_dir"
    assert "Not a directory" in raised.value.message


def test_connections_never_exceed_the_limit_across_lanes() -> None:
    with FakeOpenAI(latency=0.5) as server:
        ask(client(server, connections=20), *(f"q{i}" for i in range(40)))
        arrivals = sorted(times[0] for times in server.arrivals.values())
    first, second = arrivals[:20], arrivals[20:]
    assert first[-1] - first[0] < 0.4  # all 20 connections at once
    assert second[0] - first[0] >= 0.45  # the 21st waited for an answer


def test_replay_with_a_locked_cache_records_every_answer(
    locked_cache: Path, tmp_path: Path
) -> None:
    units = tmp_path / "units.jsonl"
    out = tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-key"}
    abt = [sys.executable, "-m", "agent_backtest.cli"]
    subprocess.run(
        [
            *abt,
            "units",
            TAU_TRAJECTORIES,
            "--tools",
            TAU_TOOLS,
            "--recorded-model",
            "gpt-4o",
            "-o",
            units,
            "--limit",
            "6",
        ],
        check=True,
        capture_output=True,
        env=env,
        cwd=ROOT,
    )
    with FakeOpenAI() as server:
        done = subprocess.run(
            [
                *abt,
                "replay",
                units,
                "--model",
                "openai/c",
                "--base-url",
                server.base_url,
                "--out",
                out,
                "--cache-dir",
                locked_cache,
                "--no-score",
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if line.startswith("abt: warning:")]
    assert len(warned) == 1 and "could not be stored" in warned[0]
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(results) == 6 and all("response" in r for r in results)
    counts = json.loads((out / "run.json").read_text())["counts"]["candidate"]
    assert counts["cache_write_errors"] == 6 and counts["calls"] == 6


def test_the_bytes_posted_are_the_bytes_the_request_sha_hashes() -> None:
    """One serialisation per call: the body a hosted provider posts is the canonical JSON of
    the payload, so its sha256 is the request sha (and old caches' keys still match)."""
    bodies: list[bytes] = []

    class Recording(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            bodies.append(self.rfile.read(int(self.headers["content-length"])))
            answer = json.dumps(
                {
                    "id": "c1",
                    "model": "m",
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "ok"},
                        }
                    ],
                }
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    with serving(Recording) as url:
        settings = ProviderSettings(type="openai", base_url=url)
        model_client = ModelClient(OpenAIProvider("openai", settings, "sk-test", 2), FAST)
        [outcome] = ask(model_client, "where is my bag?")
    payload, _, prepared_sha = model_client.prepare(request("where is my bag?"), "m", 0)
    [body] = bodies
    assert outcome.response is not None and outcome.response.message.text() == "ok"
    assert json.loads(body) == payload
    assert outcome.request_sha == prepared_sha == sha256_of(payload)
    assert "sha256:" + hashlib.sha256(body).hexdigest() == outcome.request_sha
