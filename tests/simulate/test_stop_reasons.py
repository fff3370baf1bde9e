"""Why each conversation ended, recorded and counted: a Python target that answers, reports an
error, raises or stalls, and simulated users (a scripted OpenAI-compatible server) that stop or
talk to their turn limit, each repeated with its own seed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_backtest import simulate_judge, simulate_run
from agent_backtest.simulate.models import STOP_MARKER
from tests.fake_openai import FakeOpenAI
from tests.simulate.conftest import flows_file, python_target

AGENT = """
import asyncio


async def answer(messages):
    said = messages[-1]["content"]
    if said == "crash":
        raise RuntimeError("the agent fell over")
    if said == "slow":
        await asyncio.sleep(5)
    if said == "fail":
        return [{"type": "error", "message": "the notes service is down"}]
    return [{"type": "final_text", "text": "noted: " + said}]
"""


def scripted(flow_id: str, *said: str) -> dict[str, Any]:
    return {"id": flow_id, "family": "chat", "turns": [{"user": text} for text in said]}


def simulated(flow_id: str, instructions: str) -> dict[str, Any]:
    return {
        "id": flow_id,
        "family": "talk",
        "user": {"instructions": instructions, "max_turns": 2},
    }


def user_says(body: dict[str, Any]) -> str:
    """Stops after one message when told to, else keeps talking."""
    if "Stop soon" in body["messages"][0]["content"] and len(body["messages"]) > 2:
        return STOP_MARKER
    return "one more thing"


def test_each_conversation_records_why_it_ended_and_the_summary_counts_them(
    tmp_path: Path,
) -> None:
    target = python_target(tmp_path, "stop_agent", AGENT, timeout=0.5)
    flows = flows_file(
        tmp_path / "flows.jsonl",
        [
            scripted("ends", "hello", "bye"),
            scripted("errs", "hello", "fail"),
            scripted("raises", "crash", "never sent"),
            scripted("stalls", "slow"),
            simulated("stops", "Stop soon."),
            simulated("talks", "Keep asking."),
        ],
    )
    with FakeOpenAI(reply=user_says) as fake:
        config = tmp_path / "abt.toml"
        config.write_text(
            f'[providers.sim]\ntype = "openai"\nbase_url = "{fake.base_url}"\napi_key_env = ""\n'
        )
        done = simulate_run(
            flows, target=target, out=tmp_path / "r", roles={"user": "sim/user-model"},
            config_file=config, skip_judge=True, k=2,
        )  # fmt: skip
        seeds = {body.get("seed") for body in fake.bodies}
    ended = {c.flow_id: (c.stop_reason, c.user_seed) for c in done.conversations()}
    assert ended == {
        "ends--1": ("script_end", None), "ends--2": ("script_end", None),
        "errs--1": ("agent_error", None), "errs--2": ("agent_error", None),
        "raises--1": ("transport_error", None), "raises--2": ("transport_error", None),
        "stalls--1": ("deadline", None), "stalls--2": ("deadline", None),
        "stops--1": ("user_stop", 0), "stops--2": ("user_stop", 1),
        "talks--1": ("max_turns", 0), "talks--2": ("max_turns", 1),
    }  # fmt: skip
    assert seeds == {0, 1}  # each repeat's simulated user asked with its own seed
    assert done.manifest.repeats == 2
    simulate_judge(done.path, checks_only=True)
    summary = json.loads((done.path / "summary.json").read_text(encoding="utf-8"))
    assert summary["stop_reasons"] == {
        "agent_error": 2, "deadline": 2, "max_turns": 2, "script_end": 2, "transport_error": 2,
        "user_stop": 2,
    }  # fmt: skip
