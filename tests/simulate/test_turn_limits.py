"""A live agent that answers without end is stopped at the turn's caps: a flood of small token
events, a flood of large ones and one event that never ends each cost the conversation with a
transport error, never the memory or the run's files.

The agent is a real server on 127.0.0.1 that writes up to 1 GiB of events within the turn's
deadline (it never holds them, and stops when the client hangs up); ``abt simulate run`` is a
process of its own, under a parent whose only child it is, so the parent's
``RUSAGE_CHILDREN`` peak is the run's own.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx
import pytest

from agent_backtest.simulate.targets.config import HttpTarget
from agent_backtest.simulate.targets.limits import TurnBudget, counted
from tests.conftest import ROOT
from tests.processes import run_measured
from tests.servers import serving
from tests.simulate.conftest import agent_config, flows_file, scripted

MIB = 1024 * 1024
FLOOD_BYTES = 1024 * MIB  # what the agent would send if nobody stopped it
PEAK_RSS_LIMIT_MIB = 300
DEFAULT_TURN_BYTES = 16 * MIB  # the target's max_turn_bytes when the file names none

STREAM = """
[turn]
path = "/stream"
body = { message = "${message}" }

[answer]
format = "sse"
end = "done"
events.token = { kind = "text_delta", text = "delta" }
"""


def sse(event: str, data: object) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class RunawayAgent(BaseHTTPRequestHandler):
    """Answers each message as a stream: ``small`` floods token events of ten characters,
    ``large`` of 64 KiB, ``endless`` sends one event whose data line never ends; anything else
    is echoed in one token and done."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        asked = json.loads(self.rfile.read(int(self.headers["content-length"])))["message"]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        try:
            if asked == "small":
                self._flood(sse("token", {"delta": "x" * 10}))
            elif asked == "large":
                self._flood(sse("token", {"delta": "x" * 65536}))
            elif asked == "endless":
                self.wfile.write(b'event: token\ndata: {"delta": "')
                self._flood(b"x" * MIB)
            else:
                self.wfile.write(sse("token", {"delta": f"You said: {asked}"}) + sse("done", {}))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up on the turn, as it should
        self.close_connection = True

    def _flood(self, piece: bytes) -> None:
        block = piece * max(1, MIB // len(piece))
        for _ in range(FLOOD_BYTES // len(block)):
            self.wfile.write(block)


@pytest.fixture(scope="module")
def agent_url() -> Iterator[str]:
    with serving(RunawayAgent) as url:
        yield url


def test_a_runaway_agent_ends_each_turn_at_its_caps_in_bounded_memory(
    tmp_path: Path, agent_url: str
) -> None:
    target = stream_target(tmp_path / "t.toml", agent_url, timeout=120)
    flows = flows_file(
        tmp_path / "flows.jsonl",
        [scripted(name, name) for name in ("small", "large", "endless", "fine")],
    )
    read_only = agent_config(tmp_path / "agent.toml", [])
    run = tmp_path / "run"
    command = [sys.executable, "-m", "agent_backtest.cli", "simulate", "run", flows,
               "--target", target, "--out", run, "--skip-judge",
               "--agent-config", read_only]  # fmt: skip
    seen = run_measured(command, cwd=ROOT)
    assert seen["code"] == 1, seen["err"]  # 1: conversations ended in transport errors
    assert seen["peak_mib"] < PEAK_RSS_LIMIT_MIB, seen
    conversations = {
        c["flow_id"]: c
        for c in map(json.loads, (run / "conversations.jsonl").read_text().splitlines())
    }
    assert conversations["small"]["transport_error"] == (
        "turn 1: turn_too_large: the turn sent more than 20,000 events: the target's "
        "max_turn_events is the cap"
    )
    assert conversations["large"]["transport_error"] == (
        "turn 1: turn_too_large: the turn's answer passed 16,777,216 bytes (decoded): the "
        "target's max_turn_bytes is the cap"
    )
    assert conversations["endless"]["transport_error"] == (
        "turn 1: answer_too_large: one answer passed 8,388,608 bytes (decoded): the target's "
        "max_answer_bytes is the cap"
    )
    fine = conversations["fine"]
    assert "transport_error" not in fine and fine["turns"][0]["final_text"] == "You said: fine"
    for path in run.rglob("*"):  # nothing of the floods is kept
        assert path.is_dir() or path.stat().st_size < DEFAULT_TURN_BYTES, path


def test_the_caps_are_the_target_files_to_set(tmp_path: Path, agent_url: str) -> None:
    from agent_backtest.api.simulate import simulate_run

    target = stream_target(tmp_path / "t.toml", agent_url, max_turn_events=50,
                           max_answer_bytes=4096)  # fmt: skip
    flows = flows_file(tmp_path / "flows.jsonl", [scripted("small", "small"),
                                                  scripted("large", "large")])  # fmt: skip
    read_only = agent_config(tmp_path / "agent.toml", [])
    done = simulate_run(
        flows, target=target, out=tmp_path / "run", agent_config=read_only, skip_judge=True
    )
    errors = {c.flow_id: c.transport_error for c in done.conversations()}
    assert errors == {
        "small": "turn 1: turn_too_large: the turn sent more than 50 events: the target's "
        "max_turn_events is the cap",
        "large": "turn 1: answer_too_large: one answer passed 4,096 bytes (decoded): the "
        "target's max_answer_bytes is the cap",
    }


def stream_target(path: Path, base_url: str, **settings: object) -> Path:
    """A target file for the runaway agent: no session, one streamed answer a turn."""
    top = {"name": "runaway", "type": "http", "base_url": base_url, **settings}
    lines = [f"{key} = {json.dumps(value)}" for key, value in top.items()]
    path.write_text("\n".join(lines) + "\n" + STREAM, encoding="utf-8")
    return path


@pytest.mark.parametrize("end", [b"\n\n", b"\r\r", b"\r\n\r\n", b"\n\r\n", b"\n\r"])
@pytest.mark.parametrize("read", [1, 2, 3, 4096])
def test_each_events_bytes_start_afresh_after_its_end_however_it_is_split(
    end: bytes, read: int
) -> None:
    """Three events of 3,000 bytes under a 4,096-byte cap for one event pass, read a byte at a
    time or in larger pieces, whichever blank line ends them."""
    event = b"data: " + b"x" * 2994 + end
    body = event * 3

    async def pieces() -> AsyncIterator[bytes]:
        for at in range(0, len(body), read):
            yield body[at : at + read]

    async def read_all() -> bytes:
        target = HttpTarget.model_construct(max_answer_bytes=4096)  # only its caps are read
        response = counted(
            httpx.Response(200, content=pieces(), request=httpx.Request("GET", "http://127.0.0.1")),
            TurnBudget(target),
        )
        return b"".join([chunk async for chunk in response.aiter_bytes()])

    assert asyncio.run(read_all()) == body
