"""Every job says what it is doing before its first slow step ends, in a pipe as at a terminal.

Each job runs as a child process with its output read through a pipe (where rich draws no
progress bar), against a model server on 127.0.0.1 that holds every answer back. The status
line must arrive while nothing has been answered yet: the job shows life before it waits on
anything slow, however slow that is. The seconds to the first line are printed with each
test (``-s``) and measured in ``benchmarks/first_output.py``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI

REPO = Path(__file__).resolve().parents[2]
CASSETTE = REPO / "examples" / "traces" / "cassette-openai-tool-calls.yaml"
WAIT = 60.0  # seconds a line may take on a loaded machine before the test gives up


class Output:
    """The merged stdout and stderr of a child process, each line with its arrival time."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
        env.pop("FORCE_COLOR", None)
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agent_backtest.cli", *args],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[tuple[float, str]] = []
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self.changed:
                self.lines.append((time.monotonic() - self.started, line.rstrip("\n")))
                self.changed.notify_all()

    def wait_for(self, pattern: str) -> tuple[float, str]:
        """The first line matching ``pattern`` (and when it came); fails after :data:`WAIT`."""
        found: list[tuple[float, str]] = []

        def matched() -> bool:
            found[:] = [(at, line) for at, line in self.lines if re.search(pattern, line)]
            return bool(found) or self.process.poll() is not None

        with self.changed:
            self.changed.wait_for(matched, timeout=WAIT)
        assert found, f"no line matching {pattern!r}; output: {self.text()}"
        return found[0]

    def finish(self) -> int:
        """The exit code, once the process has ended."""
        code = self.process.wait(timeout=WAIT)
        time.sleep(0.05)  # the reader thread takes the last lines
        return code

    def text(self) -> str:
        """Every line, with when it came."""
        return "\n".join(f"{at:6.2f} {line}" for at, line in self.lines)

    def printed(self) -> str:
        """Every line as printed."""
        return "\n".join(line for _, line in self.lines)


@pytest.fixture
def held_model() -> Iterator[FakeOpenAI]:
    """A model server that answers nothing until the test releases it."""
    with FakeOpenAI() as server:
        server.hold()
        yield server


def provider_config(directory: Path, server: FakeOpenAI) -> Path:
    """abt.toml naming the held server as provider ``held`` (it needs no key)."""
    path = directory / "abt.toml"
    path.write_text(
        f'[providers.held]\ntype = "openai"\nbase_url = "{server.base_url}"\napi_key_env = ""\n',
        encoding="utf-8",
    )
    return path


def first_status(output: Output, server: FakeOpenAI, pattern: str) -> tuple[float, str]:
    """The job's status line, checked to come before any answer; then the server answers."""
    at, line = output.wait_for(pattern)
    assert server.last_answer is None, f"{line!r} came after an answer: {output.text()}"
    server.release()
    assert output.finish() == 0, output.text()
    print(f"first status line after {at:.2f} s: {line}")
    return at, line


def test_replay_says_what_it_sends_then_beats_while_no_answer_comes(
    tmp_path: Path, held_model: FakeOpenAI
) -> None:
    provider_config(tmp_path, held_model)
    output = Output(
        ["replay", str(CASSETTE), "--model", "held/m", "--out", str(tmp_path / "run"),
         "--no-cache"],
        tmp_path,
    )  # fmt: skip
    output.wait_for(r"^replay: sending 2 \(unit, repeat\) pairs to held/m$")
    # no bar is drawn in a pipe: the heartbeat says how far the replay is, with its time
    at, beat = output.wait_for(r"^replay: 0/2 answered · \d+ s$")
    first_status(output, held_model, r"^replay: sending")
    assert at >= 1.0, beat


def test_simulate_says_what_it_plays_before_the_agent_answers(
    tmp_path: Path, held_model: FakeOpenAI
) -> None:
    flows = tmp_path / "flows.yaml"
    flows.write_text("- {id: one, family: chat, turns: [{user: hello}]}\n", encoding="utf-8")
    target = tmp_path / "target.toml"
    target.write_text(
        f'name = "chat"\ntype = "http"\nbase_url = "{held_model.base_url}"\n'
        '[turn]\npath = "/chat/completions"\n'
        'body = { model = "m", messages = [{ role = "user", content = "${message}" }] }\n'
        '[answer]\nformat = "json"\ntext = "choices.0.message.content"\n',
        encoding="utf-8",
    )
    output = Output(
        ["simulate", "run", str(flows), "--target", str(target), "--out", str(tmp_path / "run"),
         "--skip-judge"],
        tmp_path,
    )  # fmt: skip
    first_status(output, held_model, r"^simulate: 1 conversations to play$")
    assert re.search(r"^  one \(chat\): 1 turns$", output.printed(), re.M)


def test_bench_says_how_many_episodes_it_runs_before_the_first_ends(
    tmp_path: Path, held_model: FakeOpenAI
) -> None:
    provider_config(tmp_path, held_model)
    output = Output(
        ["bench", "run", "tau_airline", "--agent", "held/m", "--user", "scripted", "--limit",
         "1", "--out", str(tmp_path / "run")],
        tmp_path,
    )  # fmt: skip
    first_status(output, held_model, r"^bench: 1 episodes to run$")
    assert re.search(r"^bench: grading 1 episodes", output.printed(), re.M)


def test_profile_of_shipped_traces_prints_its_tables(tmp_path: Path) -> None:
    """Nothing in a profile waits on a model: the tables are its first lines."""
    output = Output(["profile", str(CASSETTE)], tmp_path)
    at, line = output.wait_for(r"\S")
    assert output.finish() == 0, output.text()
    assert "Calls" in output.printed()
    print(f"first line after {at:.2f} s: {line}")
