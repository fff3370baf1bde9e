"""``abt simulate run --executor ray`` on a real local cluster (a head and two one-CPU worker
nodes): the built-in agent's, the simulated user's and the judge's calls made by Ray workers,
and the same conversations and verdicts as the local executor.

Each node's processes hold their own key and this process another, so the servers' logs of
keys say which process made each call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.api import ExecutorOptions
from agent_backtest.api.simulate import simulate_run
from agent_backtest.simulate.judging import JudgingOptions
from tests.fake_openai import FakeOpenAI
from tests.ray_cluster import NODE_KEY_ENV, NODE_KEYS
from tests.simulate.conftest import flows_file, scripted
from tests.simulate.judge_runs import PASS, replies
from tests.simulate.test_model_target import agent_model, model_target, pure_tools

KEY_ENV = NODE_KEY_ENV  # each node of the session's cluster holds a key of its own in it
DRIVER_KEY = "sk-test-SIMDRIVER0123456789"
USER_LINES = ("note call Ana", "thanks, that is all")


@pytest.fixture(autouse=True)
def driver_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, DRIVER_KEY)


def models(body: dict[str, Any]) -> str | dict[str, Any]:
    """The agent's model, and the simulated user's: it says its lines in order, then stops."""
    if body["model"] == "agent-model":
        return agent_model(body)
    said = sum(message["role"] == "assistant" for message in body["messages"])
    return USER_LINES[said] if said < len(USER_LINES) else "###STOP###"


def config(path: Path, models_url: str, judge_url: str) -> Path:
    """An abt.toml whose two providers take their key from KEY_ENV."""
    lines = []
    for name, url in (("sim", models_url), ("judges", judge_url)):
        lines += [f"[providers.{name}]", 'type = "openai"', f'base_url = "{url}"']
        lines += [f'api_key_env = "{KEY_ENV}"', ""]
    for role in ("agent", "user", "judge"):  # no cache: every call of each run is made
        lines += [f"[roles.{role}]", "cache = false", "max_retries = 0", ""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def play(tmp_path: Path, name: str, settings: Path, execution: ExecutorOptions) -> Path:
    flows = [
        scripted("scripted", "note buy milk", "thanks"),
        {
            "id": "simulated",
            "family": "chat",
            "user": {"instructions": "Keep a note.", "max_turns": 4},
        },
        scripted("plain", "hello"),
    ]
    done = simulate_run(
        flows_file(tmp_path / f"{name}.jsonl", flows),
        target=model_target(tmp_path),
        out=tmp_path / name,
        roles={
            "agent": "sim/agent-model",
            "user": "sim/user-model",
            "judge": "judges/judge-model",
        },
        config_file=settings,
        agent_config=pure_tools(tmp_path),
        concurrency=2,
        judging=JudgingOptions(config_file=settings),
        execution=execution,
    )
    # every role's calls are in run.json, and in the manifest the function returns
    assert set(done.manifest.counts) == {"agent", "user", "judge"}
    assert all(counted.calls > 0 for counted in done.manifest.counts.values())
    return tmp_path / name


def conversations(run: Path) -> list[tuple[Any, ...]]:
    """What each conversation said and did, every model call's request and answer included."""
    rows = []
    for line in (run / "conversations.jsonl").read_text().splitlines():
        record = json.loads(line)
        turns = [
            (
                turn["user"],
                turn.get("final_text"),
                turn.get("tool_calls"),
                [(call["request"], call.get("response")) for call in turn.get("model_calls", [])],
            )
            for turn in record["turns"]
        ]
        rows.append((record["flow_id"], record.get("transport_error"), turns))
    return sorted(rows, key=lambda row: row[0])


def verdicts(run: Path) -> list[tuple[Any, ...]]:
    fields = ("flow_id", "verdict", "decided_by", "owner", "score", "evidence")
    rows = [json.loads(line) for line in (run / "verdicts.jsonl").read_text().splitlines()]
    return sorted(tuple(row.get(name) for name in fields) for row in rows)


def test_simulate_on_ray_matches_the_local_executor(ray_cluster: Any, tmp_path: Path) -> None:
    with FakeOpenAI(reply=models) as model, FakeOpenAI(reply=replies(PASS)) as judge:
        settings = config(tmp_path / "abt.toml", model.base_url, judge.base_url)
        local = play(tmp_path, "local", settings, ExecutorOptions())
        local_keys = [h["authorization"] for h in model.headers + judge.headers]
        model.headers.clear()
        judge.headers.clear()
        on_ray = play(tmp_path, "ray", settings, ExecutorOptions("ray", ray_cluster.address))
        ray_keys = [h["authorization"] for h in model.headers + judge.headers]
    assert conversations(on_ray) == conversations(local)
    assert verdicts(on_ray) == verdicts(local)
    played = conversations(local)
    assert [row[0] for row in played] == ["plain", "scripted", "simulated"]
    simulated = played[2][2]
    assert [turn[0] for turn in simulated] == list(USER_LINES)
    assert simulated[0][2][0]["name"] == "add_note"  # the agent acted on the user's line
    assert [row[1] for row in verdicts(local)] == ["pass"] * 3
    # Every call of the local run came from this process; every call of the Ray run from a
    # worker, as many calls, and both nodes' workers answered.
    assert local_keys == [f"Bearer {DRIVER_KEY}"] * len(local_keys)
    assert len(ray_keys) == len(local_keys)
    assert set(ray_keys) == {f"Bearer {key}" for key in NODE_KEYS}
