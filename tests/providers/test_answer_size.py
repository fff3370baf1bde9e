"""An answer's size is bounded: a gzip bomb and a 200 MB answer from a real server on 127.0.0.1
each end ``answer_too_large`` in a client process whose peak memory stays far below them.

The server streams both answers as it writes them (it never holds them), and stops when the
client hangs up; the client is a process of its own, whose peak resident memory (VmHWM) is
its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from agent_backtest.api.options import CallOptions
from agent_backtest.providers import CallCounters, load_model_config
from agent_backtest.providers.roles import close_clients, open_clients
from agent_backtest.trace import LLMRequest, Message
from tests.conftest import write_tau_units
from tests.processes import run_measured
from tests.servers import serving

MIB = 1024 * 1024
BOMB_BYTES = 2 * 1024 * MIB  # what the gzip body inflates to
HUGE_BYTES = 200 * MIB
PEAK_RSS_LIMIT_MIB = 300


class OversizedAnswers(BaseHTTPRequestHandler):
    """``bomb``: a gzip body of 2 GiB of zeros inside a JSON string; ``huge``: 200 MB of JSON;
    ``medium``: 64 KiB of text; anything else: a small answer. Chosen by the first part of the
    path when it names one (``/bomb/v1``), else by the text of the request's last message."""

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        named = self.path.split("/")[1]
        asked = named if named in ("bomb", "huge") else body["messages"][-1]["content"]
        self.send_response(200)
        self.send_header("content-type", "application/json")
        if asked == "bomb":
            self.send_header("content-encoding", "gzip")
        self.end_headers()
        try:
            if asked == "bomb":
                self._bomb()
            elif asked == "huge":
                self._huge()
            elif asked == "medium":
                self.wfile.write(small_answer("m" * 65536))
            else:
                self.wfile.write(small_answer("fine"))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up on the answer, as it should
        self.close_connection = True

    def _bomb(self) -> None:
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip stream
        zeros = b"0" * MIB
        self.wfile.write(packer.compress(b'{"choices": [{"message": {"content": "'))
        for _ in range(BOMB_BYTES // MIB):
            self.wfile.write(packer.compress(zeros))
        self.wfile.write(packer.compress(b'"}}]}') + packer.flush())

    def _huge(self) -> None:
        self.wfile.write(b'{"choices": [{"message": {"role": "assistant", "content": "')
        chunk = b"x" * MIB
        for _ in range(HUGE_BYTES // MIB):
            self.wfile.write(chunk)
        self.wfile.write(b'"}, "finish_reason": "stop"}]}')


def small_answer(text: str) -> bytes:
    message = {"role": "assistant", "content": text}
    return json.dumps({"choices": [{"message": message, "finish_reason": "stop"}]}).encode()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serving(OversizedAnswers) as url:
        yield f"{url}/v1"


ASK = """
import asyncio, json, sys
from pathlib import Path
from agent_backtest.providers import ModelClient, build_provider, load_model_config
from agent_backtest.providers.client import CallPolicy
from agent_backtest.providers.refs import parse_model_ref
from agent_backtest.trace import LLMRequest, Message

async def main(config, asked):
    ref = parse_model_ref("big/model", "model")
    provider = build_provider(ref, load_model_config(Path(config)))
    client = ModelClient(provider, CallPolicy(max_retries=0))
    request = LLMRequest(messages=[Message(role="user", content=asked)])
    outcome = await client.generate(request, ref.model, 0)
    await client.provider.aclose()
    kind = outcome.error.kind if outcome.error else None
    text = outcome.response.message.text() if outcome.response else None
    # VmHWM: the peak of this process image alone (ru_maxrss keeps the forking parent's too)
    status = Path("/proc/self/status").read_text()
    hwm = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    peak = int(hwm.split()[1]) // 1024
    print(json.dumps({"kind": kind, "text": text, "peak_mib": peak}))

asyncio.run(main(*sys.argv[1:]))
"""


def ask(tmp_path: Path, base_url: str, asked: str) -> dict[str, object]:
    """One call through the client's whole path, in a process of its own."""
    config = tmp_path / "abt.toml"
    config.write_text(
        f'[providers.big]\ntype = "openai"\nbase_url = "{base_url}"\napi_key_env = ""\n'
    )
    done = subprocess.run(
        [sys.executable, "-c", ASK, str(config), asked],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("asked", ["bomb", "huge"])
def test_an_oversized_answer_is_refused_without_being_held(
    tmp_path: Path, server: str, asked: str
) -> None:
    seen = ask(tmp_path, server, asked)
    assert seen["kind"] == "answer_too_large", seen
    assert isinstance(seen["peak_mib"], int) and seen["peak_mib"] < PEAK_RSS_LIMIT_MIB, seen


def test_an_answer_under_the_cap_is_read(tmp_path: Path, server: str) -> None:
    seen = ask(tmp_path, server, "fine")
    assert (seen["kind"], seen["text"]) == (None, "fine"), seen


def test_a_roles_cap_is_the_callers_to_set(tmp_path: Path, server: str) -> None:
    """``max_answer_bytes`` of the call options caps the role's answers below the provider's
    default, and is recorded with the role."""
    config_file = tmp_path / "abt.toml"
    config_file.write_text(
        f'[providers.big]\ntype = "openai"\nbase_url = "{server}"\napi_key_env = ""\n'
    )
    config = load_model_config(config_file)
    request = LLMRequest(messages=[Message(role="user", content="medium")])

    async def kind_of_answer(options: CallOptions) -> str | None:
        role = options.role("candidate", "big/model", config)
        clients = open_clients(role, [role.ref], config, CallCounters())
        try:
            outcome = await clients[role.ref].generate(request, "model", 0)
        finally:
            await close_clients(clients)
        return outcome.error.kind if outcome.error else None

    capped = CallOptions(max_retries=0, cache=False, max_answer_bytes=4096)
    assert capped.role("candidate", "big/model", config).max_answer_bytes == 4096
    assert asyncio.run(kind_of_answer(capped)) == "answer_too_large"
    assert asyncio.run(kind_of_answer(CallOptions(max_retries=0, cache=False))) is None


@pytest.mark.parametrize("asked", ["bomb", "huge"])
def test_a_replay_of_oversized_answers_records_them_as_errors_in_bounded_memory(
    tmp_path: Path, server: str, asked: str
) -> None:
    units = write_tau_units(tmp_path / "units.jsonl", limit=2)
    run = tmp_path / "run"
    endpoint = server.replace("/v1", f"/{asked}/v1")
    replay = [sys.executable, "-m", "agent_backtest.cli", "replay", units, "--model", "openai/m",
              "--base-url", endpoint, "--out", run, "--no-cache", "--max-retries", "0"]  # fmt: skip
    seen = run_measured(replay, env={**os.environ, "OPENAI_API_KEY": "sk-test"})
    assert seen["code"] == 1, seen["err"]  # 1: no answer arrived, the run failed
    assert seen["peak_mib"] < PEAK_RSS_LIMIT_MIB, seen
    results = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert [r["error"]["kind"] for r in results] == ["answer_too_large"] * 2
    for path in run.iterdir():  # nothing of the answers is kept
        assert path.stat().st_size < MIB, path
