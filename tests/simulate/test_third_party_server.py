"""The ``http`` target against a server this project did not write: llama-cpp-python's own
OpenAI-compatible server (``python -m llama_cpp.server``) on the embedded model. Its streams are
data-only server-sent events (no ``event:`` field; the type is the data's ``object``), each turn
ending with ``data: [DONE]``, and it keeps no session: a target file alone must express it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_backtest.providers.local import model_path
from tests.simulate.conftest import abt

pytest.importorskip("llama_cpp.server.app", reason="needs llama-cpp-python[server]")
pytestmark = pytest.mark.local_model

FLOWS = """\
- id: greet
  family: chat
  turns:
    - user: Say hello.
    - user: Now say goodbye.
"""


def target(port: int, end: str) -> str:
    """The server as a target: one chat completion a turn, each chunk's text at its path."""
    return f"""\
name = "llama-cpp-server"
type = "http"
base_url = "http://127.0.0.1:{port}"
timeout = 120

[turn]
path = "/v1/chat/completions"
body.messages = [{{ role = "user", content = "${{message}}" }}]
body.stream = true
body.max_tokens = 12

[answer]
format = "sse"
type_from = "object"
end = "{end}"
events."chat.completion.chunk" = {{ kind = "text_delta", text = "choices.0.delta.content" }}
"""


@pytest.fixture(scope="module")
def server_port() -> Iterator[int]:
    """llama-cpp-python's server on a free port, one thread, stopped at the end."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path("smollm2")),
         "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_ctx", "2048"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "OMP_WAIT_POLICY": "passive"},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.2)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)


def conversation(tmp_path: Path, port: int, end: str) -> dict:
    """The one conversation of a checks-only run of :data:`FLOWS` through the server."""
    (tmp_path / "flows.yaml").write_text(FLOWS)
    (tmp_path / "target.toml").write_text(target(port, end))
    code, output = abt(
        "simulate", "run", tmp_path / "flows.yaml", "--target", tmp_path / "target.toml",
        "--judge", "none", "--out", tmp_path / "run",
    )  # fmt: skip
    assert code in (0, 1), output
    [line] = (tmp_path / "run" / "conversations.jsonl").read_text().splitlines()
    return json.loads(line)


def test_a_conversation_with_the_server_is_recorded_turn_by_turn(
    tmp_path: Path, server_port: int
) -> None:
    played = conversation(tmp_path, server_port, "[DONE]")
    assert played["stop_reason"] == "script_end" and played.get("transport_error") is None
    assert [turn["user"] for turn in played["turns"]] == ["Say hello.", "Now say goodbye."]
    assert all(turn["final_text"] for turn in played["turns"])  # the deltas, joined
    assert all(turn["traceparent"].startswith("00-") for turn in played["turns"])


def test_a_stream_that_closes_before_the_end_event_is_not_a_finished_turn(
    tmp_path: Path, server_port: int
) -> None:
    # The server never sends this event: every stream closes without it.
    played = conversation(tmp_path, server_port, "chat.completion.final")
    assert played["stop_reason"] == "transport_error"
    assert played["transport_error"].startswith("turn 1: stream_ended_early: ")
