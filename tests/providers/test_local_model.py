"""The embedded local model answers real τ-bench requests with real tool calls.

Needs the ``local`` extra (llama-cpp-python and the packaged SmolLM2 model): the conftest skips
``local_model`` tests without it, except under CI where that is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.conftest import TAU_TOOLS, write_tau_units

pytestmark = pytest.mark.local_model


def test_local_model_replays_tau_units_with_tool_calls(tmp_path: Path) -> None:
    runner = CliRunner()
    units = tmp_path / "units.jsonl"
    # Session 0's early steps, where production called search tools: short contexts, and the
    # small model reliably answers with calls there.
    write_tau_units(units, limit=2)
    run = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "replay",
            str(units),
            "--model",
            "local/smollm2",
            "--out",
            str(run),
            "--no-cache",
            "--concurrency",
            "1",
            "--timeout",
            "600",
        ],
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert len(records) == 2 and not any(r.get("error") for r in records)
    tool_names = {tool["function"]["name"] for tool in json.loads(TAU_TOOLS.read_text())}
    calls = [call for r in records for call in r["response"]["message"].get("tool_calls") or []]
    assert calls, "the local model made no tool call"
    assert all(call["name"] in tool_names and isinstance(call["arguments"], dict) for call in calls)
    assert all("set max_tokens 256 (local default)" in r["adjustments"] for r in records)


def test_a_request_longer_than_the_context_window_is_a_context_length_error() -> None:
    """Not llama.cpp's bare ValueError in the middle of a call: a classified error, so a replay
    records it as an infrastructure error of its kind and a bench episode names it."""
    import asyncio

    from agent_backtest.providers.errors import ProviderError
    from agent_backtest.providers.local import LocalProvider

    provider = LocalProvider("local", "smollm2", context=512)
    payload = {
        "model": "smollm2",
        "messages": [{"role": "user", "content": "tell me about flights " * 400}],
        "max_tokens": 64,
    }
    with pytest.raises(ProviderError) as raised:
        asyncio.run(provider.send(payload, timeout=60))
    assert raised.value.kind == "context_length"
    assert "context window holds 512" in raised.value.detail


# A generation cancelled mid-answer, then another request: without waiting for the first
# generation to end, the second runs beside it on the same model and llama.cpp aborts the
# process (GGML_ASSERT), so this runs in a process of its own and reports what it saw.
CANCEL_THEN_ASK = """
import asyncio

from agent_backtest.providers.local import LocalProvider
from agent_backtest.trace import LLMRequest, Message


def body(provider, text, max_tokens):
    request = LLMRequest(
        messages=[Message(role="user", content=text)], params={"max_tokens": max_tokens}
    )
    return provider.payload(request, "smollm2", 0)[0]


async def main():
    provider = LocalProvider("local", "smollm2")
    await provider.load()
    long = body(provider, "Write a long story about a lighthouse keeper and the sea.", 400)
    generating = asyncio.ensure_future(provider.send(long, 120))
    await asyncio.sleep(0.5)
    generating.cancel()
    try:
        await generating
    except asyncio.CancelledError:
        print("cancelled", flush=True)
    answer = await provider.send(body(provider, "Say hello.", 8), 120)
    print("answered", bool(answer.message.text().strip()), flush=True)
    await provider.aclose()


asyncio.run(main())
"""


def test_a_cancelled_answer_ends_before_the_next_request_runs() -> None:
    """The embedded model under cancellation: a request cancelled mid-answer, then a second
    request; the process lives and the second request is answered."""
    done = subprocess.run(
        [sys.executable, "-c", CANCEL_THEN_ASK],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_WAIT_POLICY": "passive"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["cancelled", "answered True"], done.stdout
