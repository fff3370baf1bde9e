"""The demo agent app of examples/demo_agent as a real process on 127.0.0.1, for the tests that
talk to it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import ROOT


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An assistant message calling one tool."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{name}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def lookup_model(body: dict[str, Any]) -> str | dict[str, Any]:
    """A scripted model for the agent: one look-up (the notes, or the calendar of 2 March),
    then an answer with what it found."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return f"Here it is: {last['content']}"
    if "notes" in last["content"]:
        return call("list_notes", {})
    return call("list_events", {"day": "2026-03-02"})


@contextmanager
def demo_agent(
    db: Path,
    base_url: str | None,
    model: str = "scripted",
    otlp_file: Path | None = None,
    otlp_endpoint: str | None = None,
) -> Iterator[str]:
    """The app serving on a socket of 127.0.0.1 it is handed (its own traces written to
    ``otlp_file`` and sent to ``otlp_endpoint`` when given); its base URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    options = ["--db", str(db), "--model", model]
    options += ["--model-base-url", base_url] if base_url else []
    options += ["--otlp-file", str(otlp_file)] if otlp_file else []
    options += ["--otlp-endpoint", otlp_endpoint] if otlp_endpoint else []
    process = subprocess.Popen(
        [sys.executable, "-m", "examples.demo_agent", *options, "--fd", str(listener.fileno())],
        cwd=ROOT,
        pass_fds=[listener.fileno()],
    )
    listener.close()  # the app holds its own copy
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, "the app did not start"
            time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
