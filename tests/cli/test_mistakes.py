"""User mistakes and stops end with one line and a known exit code, never a traceback.

Each case runs ``abt`` as a real process, as a user would, in a folder of its own.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import write_tau_units
from tests.fake_openai import FakeOpenAI

SECRET = "sk-test-SECRETSECRET0123456789"
ENV = {**os.environ, "OPENAI_API_KEY": SECRET}


@pytest.fixture(scope="module")
def units(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tau_units(tmp_path_factory.mktemp("units") / "units.jsonl", limit=12)


def abt(cwd: Path, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_backtest.cli", *map(str, args)],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_one_line(result: subprocess.CompletedProcess[str], *expected: str) -> str:
    """Exit 2 and one ``abt: error:`` line (warnings aside) holding every ``expected`` text."""
    lines = [line for line in result.stderr.splitlines() if not line.startswith("abt: warning")]
    errors = [line for line in lines if line.startswith("abt: error: ")]
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(errors) == 1, result.stderr
    assert lines[-1] == errors[0]
    for text in expected:
        assert text in errors[0]
    return errors[0]


def mock_replay(units: Path, out: object, *extra: object) -> list[object]:
    return ["replay", units, "--model", "mock/golden", "--out", out, "--no-cache", *extra]


def test_a_binary_config_is_one_line(units: Path, tmp_path: Path) -> None:
    (tmp_path / "abt.toml").write_bytes(bytes(range(256)) * 4)
    assert_one_line(abt(tmp_path, *mock_replay(units, "run")), "abt.toml", "not UTF-8")
    explicit = tmp_path / "other.toml"
    explicit.write_bytes(b"\xff\xfe[roles]\x00")
    result = abt(tmp_path, *mock_replay(units, "run2", "--config", explicit))
    assert_one_line(result, str(explicit), "not UTF-8")


def test_an_out_that_is_a_file_or_cannot_be_made_is_one_line(units: Path, tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file")
    assert_one_line(abt(tmp_path, *mock_replay(units, "taken")), "--out", "is a file")
    assert_one_line(abt(tmp_path, *mock_replay(units, "taken/run")), "--out", "Not a directory")
    result = abt(tmp_path, *mock_replay(units, "/proc/abt-run"))
    assert_one_line(result, "--out", "cannot make the run directory /proc/abt-run")


def test_an_output_file_that_cannot_be_written_is_one_line(units: Path, tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file")
    (tmp_path / "folder").mkdir()
    for command in ("units", "ingest"):
        for target, why in (
            ("taken/units.jsonl", "Not a directory"),
            ("folder", "is a folder"),
            ("/proc/units.jsonl", "cannot write /proc/units.jsonl"),
        ):
            result = abt(tmp_path, command, units, "-o", target)
            assert_one_line(result, "--output", why)
    assert (tmp_path / "taken").read_text() == "a file"


def test_a_cache_dir_that_is_a_file_or_a_junk_database_is_one_line(
    units: Path, tmp_path: Path
) -> None:
    (tmp_path / "taken").write_text("a file")
    result = abt(tmp_path, "cache", "stats", "--cache-dir", "taken")
    assert_one_line(result, "--cache-dir", "Not a directory")
    result = abt(tmp_path, "replay", units, "--model", "mock/golden", "--out", "r", "--cache-dir",
                 "taken")  # fmt: skip
    assert_one_line(result, "--cache-dir", "Not a directory")
    junk = tmp_path / "junk"
    junk.mkdir(mode=0o700)
    (junk / "responses.sqlite3").write_bytes(os.urandom(4096))
    assert_one_line(abt(tmp_path, "cache", "stats", "--cache-dir", junk), "--cache-dir")
    assert_one_line(abt(tmp_path, "cache", "clear", "--cache-dir", junk), "--cache-dir")
    wrong = tmp_path / "wrong"
    wrong.mkdir(mode=0o700)
    with sqlite3.connect(wrong / "responses.sqlite3") as db:
        db.execute("CREATE TABLE responses (other)")
    result = abt(tmp_path, "cache", "stats", "--cache-dir", wrong)
    assert_one_line(result, "--cache-dir", "cannot be read", "remove the file")


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("not a url", "is not an endpoint URL"),
        ("ftp://example.com/v1", "is not an endpoint URL"),
        ("http:///v1", "is not an endpoint URL"),
        ("http://127.0.0.1:99999/v1", "has no valid port"),
    ],
)
def test_a_malformed_base_url_is_refused_before_the_run(
    units: Path, tmp_path: Path, url: str, why: str
) -> None:
    result = abt(tmp_path, "replay", units, "--model", "openai/m", "--base-url", url, "--out",
                 "run", "--no-cache")  # fmt: skip
    assert_one_line(result, "--base-url", why)
    assert not (tmp_path / "run").exists()


def start(cwd: Path, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agent_backtest.cli", *map(str, args)],
        cwd=cwd,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def slow_replay(units: Path, server: FakeOpenAI, out: str) -> list[object]:
    return ["replay", units, "--model", "openai/m", "--base-url", server.base_url, "--out", out,
            "--no-cache", "--concurrency", "2"]  # fmt: skip


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_at_any_moment_exits_quietly(units: Path, tmp_path: Path, signum: int) -> None:
    code = {signal.SIGINT: 130, signal.SIGTERM: 143}[signum]
    with FakeOpenAI(latency=1.0) as server:  # 12 units, 2 at a time: longer than the delays
        # From 0.3 s: the interpreter's own start (and runpy's import of the package, before
        # any of the command line's code runs) is out of the command line's reach.
        for number, delay in enumerate((0.3, 0.5, 0.8, 1.2, 1.8)):
            process = start(tmp_path, *slow_replay(units, server, f"run-{number}"))
            time.sleep(delay)
            process.send_signal(signum)
            _, stderr = process.communicate(timeout=60)
            # Before Python has its handlers, the signal's default action ends the process (a
            # shell reports that as 128 + the signal, too).
            assert process.returncode in (code, -signum), (delay, stderr)
            assert not traceback_from_running_code(stderr), (delay, stderr)


def traceback_from_running_code(stderr: str) -> bool:
    """A traceback through any function of the package: the command line's code was running.

    On a loaded machine a signal can still arrive while the interpreter imports the package,
    before ``main`` runs and installs its handlers; Python's own handler then prints the
    interrupted imports (frames of modules only, ``<module>``), which no code of ours can catch.
    """
    frames = re.findall(r'File "[^"]*agent_backtest[^"]*", line \d+, in (\S+)', stderr)
    return any(name != "<module>" for name in frames)


def test_sigterm_during_a_replay_exits_143_and_marks_the_run_interrupted(
    units: Path, tmp_path: Path
) -> None:
    with FakeOpenAI(latency=0.3) as server:
        process = start(tmp_path, *slow_replay(units, server, "run"))
        results = tmp_path / "run" / "results.jsonl"
        deadline = time.monotonic() + 60
        while not (results.exists() and results.read_bytes().count(b"\n") >= 2):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.02)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
        sent = server.total
    assert process.returncode == 143, stderr
    assert "Traceback" not in stderr and stderr.splitlines()[-1] == "abt: terminated"
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["status"] == "interrupted"
    assert len(results.read_text().splitlines()) == sent < 12
