"""A simulate run gives what its simulated user spent, priced from the usage answered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_backtest import simulate_run, spent
from agent_backtest.simulate.models import STOP_MARKER
from tests.fake_openai import FakeOpenAI
from tests.simulate.conftest import flows_file, python_target

AGENT = """
async def answer(messages):
    return [{"type": "final_text", "text": "noted: " + messages[-1]["content"]}]
"""
INPUT_PRICE, OUTPUT_PRICE = 0.5, 1.5  # USD per million tokens


def user_says(body: dict) -> str:
    return STOP_MARKER if len(body["messages"]) > 2 else "please note my order"


def test_the_simulated_users_calls_are_priced(tmp_path: Path) -> None:
    target = python_target(tmp_path, "note_agent", AGENT)
    flows = flows_file(
        tmp_path / "flows.jsonl",
        [
            {"id": f"f{i}", "family": "talk", "user": {"instructions": "Order.", "max_turns": 3}}
            for i in range(3)
        ],
    )
    with FakeOpenAI(reply=user_says) as fake:
        config = tmp_path / "abt.toml"
        config.write_text(
            f'[providers.sim]\ntype = "openai"\nbase_url = "{fake.base_url}"\napi_key_env = ""\n'
            f'[prices."sim/user-model"]\ninput = {INPUT_PRICE}\noutput = {OUTPUT_PRICE}\n'
        )
        done = simulate_run(
            flows, target=target, out=tmp_path / "r", roles={"user": "sim/user-model"},
            config_file=config, skip_judge=True,
        )  # fmt: skip
        bodies = list(fake.bodies)
    assert bodies
    # the test server reports len(json.dumps(body)) // 4 input and 12 output tokens an answer
    tokens_in = sum(len(json.dumps(body)) // 4 for body in bodies)
    expected = (tokens_in * INPUT_PRICE + 12 * len(bodies) * OUTPUT_PRICE) / 1e6
    user = spent(done.path)["user"]
    assert user.calls == len(bodies)
    assert user.usd == pytest.approx(expected, abs=1e-6)
