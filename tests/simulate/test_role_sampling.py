"""A simulate run sends the agent's and the simulated user's sampling settings with each of their
requests: the roles' own over the model target's params."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_backtest.api.roles import RoleSettings
from agent_backtest.api.simulate import simulate_run
from tests.fake_openai import FakeOpenAI
from tests.simulate.conftest import flows_file
from tests.simulate.test_model_target import agent_model, config_file, model_target

STOP = "###STOP###"


def agent_and_user(body: dict[str, Any]) -> str | dict[str, Any]:
    """The agent model when tools are offered; else the simulated user: one note, then stop."""
    if body.get("tools"):
        return agent_model(body)
    said = sum(m["role"] == "assistant" for m in body["messages"])
    return STOP if said else "note buy milk"


@pytest.mark.fake_openai(reply=agent_and_user)
def test_the_agents_and_the_users_sampling_reach_every_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    monkeypatch.chdir(tmp_path)
    flow = {"id": "u", "family": "chat", "user": {"instructions": "Save a note.", "max_turns": 3}}
    target = model_target(tmp_path)
    target.write_text("params = { temperature = 0.9, max_tokens = 50 }\n" + target.read_text())
    done = simulate_run(
        flows_file(tmp_path / "flows.jsonl", [flow]),
        target=target,
        out=tmp_path / "run",
        roles={
            "agent": RoleSettings(model="sim/agent-model", temperature=0.2),
            "user": RoleSettings(model="sim/user-model", top_p=0.5),
        },
        config_file=config_file(tmp_path, fake_openai),
        skip_judge=True,
    )
    agent = [b for b in fake_openai.bodies if b["model"] == "agent-model"]
    user = [b for b in fake_openai.bodies if b["model"] == "user-model"]
    assert len(agent) == 2 and len(user) == 2
    assert all(b["temperature"] == 0.2 and b["max_tokens"] == 50 for b in agent)
    assert all(b["top_p"] == 0.5 and "temperature" not in b for b in user)
    assert done.manifest.roles["agent"].temperature == 0.2
    assert done.manifest.roles["user"].sampling == {"top_p": 0.5}
