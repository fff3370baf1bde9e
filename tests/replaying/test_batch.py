"""``abt replay --batch`` against a real fake of OpenAI's and Anthropic's batch APIs on 127.0.0.1:
the same answers as live calls, per-request errors, kill and resume, splitting, refusals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.providers.batches import BatchLimits, chunks
from tests.fake_batches import FakeBatches

SECRET = "sk-test-BATCHSECRET0123456789"
runner = CliRunner()


@pytest.fixture
def fake() -> Iterator[FakeBatches]:
    with FakeBatches(api_key=SECRET) as server:
        yield server


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.chdir(tmp_path)  # no stray abt.toml


def abt(*args: object) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout + result.stderr


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def by_pair(path: Path) -> dict[tuple[str, int], dict]:
    return {(r["unit_id"], r["repeat"]): r for r in lines(path)}


def manifest(run: Path) -> dict:
    return json.loads((run / "run.json").read_text())


def model_args(api: str, fake: FakeBatches) -> list[str]:
    if api == "openai":
        return ["--model", "openai/candidate-1", "--base-url", fake.base_url]
    return ["--model", "anthropic/claude-test", "--base-url", fake.root]


def replay(units: Path, api: str, fake: FakeBatches, run: Path, *extra: object) -> list[object]:
    return [
        "replay", units, *model_args(api, fake), "--out", run, "--no-cache", "--max-retries",
        "0", "--timeout", "10", *extra,
    ]  # fmt: skip


BATCH = ("--batch", "--batch-poll", "0.01")


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_batch_replay_gives_what_live_calls_give(
    units_file: Path, fake: FakeBatches, tmp_path: Path, api: str
) -> None:
    live, batched = tmp_path / "live", tmp_path / "batched"
    code, output = abt(*replay(units_file, api, fake, live, "--k", "2"))
    assert code == 0, output
    live_calls = fake.live
    assert live_calls == 48 and not fake.created

    code, output = abt(*replay(units_file, api, fake, batched, "--k", "2", *BATCH))
    assert code == 0, output
    assert fake.live == live_calls  # no live call: every answer came from the batch
    assert len(fake.created) == 1 and len(fake.requests_sent()) == 48
    live_results, batch_results = (
        by_pair(live / "results.jsonl"),
        by_pair(batched / "results.jsonl"),
    )
    assert batch_results.keys() == live_results.keys() and len(batch_results) == 48
    for pair, record in batch_results.items():
        # The very same body was sent, and the answer parsed by the same code.
        assert record["request_sha"] == live_results[pair]["request_sha"]
        assert record["response"] == live_results[pair]["response"]
        assert record["attempts"] == 1 and "latency_ms" not in record  # unknown is not zero
    assert by_pair(batched / "scores.jsonl") == by_pair(live / "scores.jsonl")
    run = manifest(batched)
    assert run["status"] == "completed" and run["config"]["batch"]["poll_seconds"] == 0.01
    [job] = run["batches"]["jobs"]
    assert job["collected"] and (job["requests"], job["answered"], job["left"]) == (48, 48, 0)
    assert run["counts"]["candidate"]["calls"] == 48
    for path in batched.iterdir():
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in output


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_per_request_errors_have_the_kinds_of_live_calls(
    units_file: Path, fake: FakeBatches, tmp_path: Path, api: str
) -> None:
    fake.faults = {
        "u0-r0": "error_400",
        "u1-r0": "error_500",
        "u2-r0": "expired",
        "u3-r0": "malformed",
        "u4-r0": "canceled",
    }
    run = tmp_path / "faulty"
    code, output = abt(*replay(units_file, api, fake, run, *BATCH))
    assert code == 130, output  # the cancelled request is still to do
    results = lines(run / "results.jsonl")
    assert len(results) == 23
    positions = [json.loads(line)["unit_id"] for line in units_file.read_text().splitlines()]
    kinds = {r["unit_id"]: (r.get("error") or {}).get("kind") for r in results}
    assert [kinds.get(unit) for unit in positions[:5]] == [
        "http_4xx", "http_5xx", "batch_expired", "malformed_response", None,
    ]  # fmt: skip
    assert positions[4] not in kinds
    assert all(kinds[unit] is None for unit in positions[5:])
    assert manifest(run)["status"] == "interrupted"
    [job] = manifest(run)["batches"]["jobs"]
    assert (job["answered"], job["errors"], job["left"]) == (19, 4, 1)
    assert "left to do 1" in output

    # A resume sends only the cancelled request, in a new batch; the errors stay recorded.
    fake.faults = {}
    code, output = abt("replay", "--resume", run, "--no-score")
    assert code == 0, output
    assert [batch["custom_ids"] for batch in fake.created[1:]] == [["u4-r0"]]
    assert manifest(run)["status"] == "completed_with_errors"
    # --retry-errors sends the four errors again (the expired one too).
    code, output = abt("replay", "--resume", run, "--retry-errors", "--no-score")
    assert code == 0, output
    assert sorted(fake.created[2]["custom_ids"]) == ["u0-r0", "u1-r0", "u2-r0", "u3-r0"]
    final = lines(run / "results.jsonl")
    assert len(final) == 24 and not any("error" in r for r in final)
    assert manifest(run)["status"] == "completed"


def run_process(args: list[object]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "agent_backtest.cli", *[str(a) for a in args]],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "OPENAI_API_KEY": SECRET, "ANTHROPIC_API_KEY": SECRET},
    )


def wait_for_batch(run: Path, process: subprocess.Popen[bytes]) -> dict:
    """The first batch run.json records, once it does."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            jobs = (manifest(run).get("batches") or {}).get("jobs")
        except (OSError, ValueError):
            jobs = None
        if jobs:
            return jobs[0]
        time.sleep(0.02)
    raise AssertionError(f"{run}/run.json never recorded a batch")


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_run_killed_after_submitting_resumes_by_polling_the_same_batch(
    units_file: Path, fake: FakeBatches, tmp_path: Path, api: str
) -> None:
    live = tmp_path / "live"
    assert abt(*replay(units_file, api, fake, live))[0] == 0
    run = tmp_path / "killed"
    fake.hold = True  # the batch stays in progress: the process is polling it when killed
    process = run_process(replay(units_file, api, fake, run, *BATCH))
    recorded = wait_for_batch(run, process)
    while fake.polls == 0 and process.poll() is None:
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert [batch["id"] for batch in fake.created] == [recorded["id"]]
    assert not (run / "results.jsonl").exists() or not lines(run / "results.jsonl")

    fake.hold = False
    resumed = run_process(["replay", "--resume", run])
    assert resumed.wait(timeout=120) == 0
    assert len(fake.created) == 1  # polled, never submitted again
    results = lines(run / "results.jsonl")
    assert len(results) == len({(r["unit_id"], r["repeat"]) for r in results}) == 24
    expected = {pair: r["response"] for pair, r in by_pair(live / "results.jsonl").items()}
    assert {pair: r["response"] for pair, r in by_pair(run / "results.jsonl").items()} == expected
    final = manifest(run)
    assert final["status"] == "completed" and final["attempts_of_run"] == 2
    assert final["batches"]["jobs"][0]["id"] == recorded["id"]
    assert len((run / "scores.jsonl").read_text().splitlines()) == 24


def test_batches_are_split_to_the_size_asked_and_no_request_is_sent_twice(
    units_file: Path, fake: FakeBatches, tmp_path: Path
) -> None:
    run = tmp_path / "split"
    code, output = abt(*replay(units_file, "openai", fake, run, *BATCH, "--batch-size", "10"))
    assert code == 0, output
    assert [len(batch["custom_ids"]) for batch in fake.created] == [10, 10, 4]
    sent = fake.requests_sent()
    assert len(sent) == len(set(sent)) == 24
    jobs = manifest(run)["batches"]["jobs"]
    assert [job["id"] for job in jobs] == [batch["id"] for batch in fake.created]
    assert all(job["collected"] and job["answered"] == job["requests"] for job in jobs)


def test_batch_answers_fill_the_cache_and_a_cached_pair_is_not_sent(
    units_file: Path, fake: FakeBatches, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = [*model_args("openai", fake), "--cache-dir", cache, "--limit", "6", "--no-score"]
    code, output = abt("replay", units_file, *first, "--out", tmp_path / "a", *BATCH)
    assert code == 0, output
    # A live rerun pays nothing: the batch's answers are in the cache.
    code, _ = abt("replay", units_file, *first, "--out", tmp_path / "b")
    assert code == 0 and fake.live == 0
    assert all(r["cache_hit"] for r in lines(tmp_path / "b" / "results.jsonl"))
    # A batch run over more units sends only the pairs the cache cannot answer.
    more = [*model_args("openai", fake), "--cache-dir", cache, "--limit", "9", "--no-score"]
    code, _ = abt("replay", units_file, *more, "--out", tmp_path / "c", *BATCH)
    assert code == 0 and len(fake.created) == 2
    assert fake.created[1]["custom_ids"] == ["u6-r0", "u7-r0", "u8-r0"]
    assert sum(r["cache_hit"] for r in lines(tmp_path / "c" / "results.jsonl")) == 6


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--model", "mock/golden"], "--batch: mock/golden has no batch API"),
        (["--model", "openai/m", "--rpm", "10"], "--batch: a batch's requests are paced"),
    ],
)
def test_what_a_batch_cannot_do_is_refused_before_anything_is_written(
    units_file: Path, tmp_path: Path, extra: list[str], message: str
) -> None:
    run = tmp_path / "refused"
    code, output = abt("replay", units_file, *extra, "--out", run, "--batch")
    assert code == 2 and output.startswith(f"abt: error: {message}"), output
    assert len(output.strip().splitlines()) == 1
    assert not run.exists()


def test_batch_settings_without_batch_are_refused(units_file: Path, tmp_path: Path) -> None:
    run = tmp_path / "no-batch"
    code, output = abt("replay", units_file, "--model", "mock/golden", "--out", run,
                       "--batch-size", "5")  # fmt: skip
    assert code == 2 and "--batch-size: applies to batches: add --batch" in output
    assert not run.exists()


def test_chunks_keep_to_the_request_and_byte_limits() -> None:
    encoded = [(f"u{i}", b"x" * 9) for i in range(7)]  # 10 bytes each with its newline
    assert [len(c) for c in chunks(encoded, BatchLimits(requests=3, bytes=1000))] == [3, 3, 1]
    assert [len(c) for c in chunks(encoded, BatchLimits(requests=100, bytes=25))] == [2, 2, 2, 1]
    # A request bigger than the byte limit still goes, alone (the provider says what it thinks).
    assert [len(c) for c in chunks(encoded, BatchLimits(requests=100, bytes=5))] == [1] * 7


def test_a_batch_the_provider_no_longer_knows_leaves_its_requests_to_do(
    units_file: Path, fake: FakeBatches, tmp_path: Path
) -> None:
    run = tmp_path / "forgotten"
    fake.hold = True
    process = run_process(replay(units_file, "openai", fake, run, *BATCH, "--limit", "3"))
    recorded = wait_for_batch(run, process)
    process.send_signal(signal.SIGKILL)
    process.wait()
    del fake.batches[recorded["id"]]  # deleted on the provider's side while the run was down
    fake.hold = False
    # The resume learns the batch is gone and sends its three requests again, in a new batch.
    code, output = abt("replay", "--resume", run, "--no-score")
    assert code == 0, output
    assert "unknown to the provider" in output and "left to do 3" in output
    assert [len(batch["custom_ids"]) for batch in fake.created] == [3, 3]
    assert len(lines(run / "results.jsonl")) == 3
    forgotten, again = manifest(run)["batches"]["jobs"]
    assert forgotten["collected"] and forgotten["left"] == 3 and again["answered"] == 3
