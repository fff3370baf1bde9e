"""The demo agent on the embedded model, as a real process: a client that hangs up in the middle
of an answer, then a second message. The first generation must end (or be stopped) before the
second starts, or llama.cpp aborts the process with two generations on one model."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from tests.optional import require
from tests.simulate.demo_app import demo_agent

require("fastapi", "pip install 'agent-backtest[demo]'")
require("uvicorn", "pip install 'agent-backtest[demo]'")

pytestmark = pytest.mark.local_model

HUNG_UP_AFTER_SECONDS = 3.0  # the first answer is well under way by then (prompt evaluation)


def test_a_client_that_hangs_up_mid_answer_leaves_the_agent_answering(tmp_path: Path) -> None:
    with demo_agent(tmp_path / "demo.db", None, model="local/smollm2") as url:
        with httpx.Client(base_url=url, timeout=300) as client:
            session = client.post("/sessions").json()["id"]
            turn = f"/sessions/{session}/messages"
            long = {"message": "Write a long story about a lighthouse keeper and the sea."}
            with client.stream("POST", turn, json=long) as answer:
                assert answer.status_code == 200
                time.sleep(HUNG_UP_AFTER_SECONDS)
            # the block's end closed the connection with the answer unread: the client is gone
        with httpx.Client(base_url=url, timeout=300) as client:
            session = client.post("/sessions").json()["id"]
            second = client.post(f"/sessions/{session}/messages", json={"message": "Say hello."})
            health = client.get("/health")
    assert second.status_code == 200
    events = [
        line.removeprefix("event: ") for line in second.text.splitlines() if "event: " in line
    ]
    assert events[0] == "tools_offered" and events[-1] == "usage", second.text  # a whole turn
    assert "could not be reached" not in second.text, second.text
    assert health.json() == {"status": "ok"}
