"""A real run of each job, made by its command in process against servers on 127.0.0.1.

replay: two τ-bench units answered by ``mock/golden``. simulate: a scripted flow and a flow
played by a simulated user (a model on a local OpenAI-compatible server) through the notes
agent over HTTP. bench: two cases of the shop benchmark, its agent scripted on the same kind of
server, graded against the gold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.bench.conftest import scripted, write_benchmark
from tests.bench.conftest import write_config as write_bench_config
from tests.conftest import write_tau_units
from tests.fake_openai import FakeOpenAI
from tests.simulate.agent_server import AgentServer, create_notes_db
from tests.simulate.conftest import flows_file, target_file

runner = CliRunner()
STOP_MARKER = "###STOP###"


def abt(*args: object) -> None:
    """Run ``abt ARGS`` in process; it must succeed."""
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, result.output


def replay_run(folder: Path) -> Path:
    """A replay of two τ-bench units, scored; its run directory."""
    units = write_tau_units(folder / "units.jsonl", limit=2)
    out = folder / "replay"
    abt("replay", units, "--model", "mock/golden", "--out", out, "--no-cache")
    return out


def user_says(body: dict[str, Any]) -> str:
    """The simulated user: hello, hello again, then the stop marker."""
    said = sum(message["role"] == "assistant" for message in body["messages"])
    return ["hello, I am Bo", "hello again", f"thanks {STOP_MARKER}"][said]


def simulate_run(folder: Path) -> Path:
    """A simulate run of a scripted flow and a simulated user's flow, not judged."""
    flows = flows_file(
        folder / "flows.jsonl",
        [
            {"id": "scripted", "family": "chat", "turns": [{"user": "hi"}]},
            {
                "id": "simulated",
                "family": "chat",
                "user": {"instructions": "Say hello twice, then stop."},
            },
        ],
    )
    notes = create_notes_db(folder / "notes.db", ["buy milk"])
    out = folder / "simulate"
    with AgentServer(folder / "agent.log", notes) as agent, FakeOpenAI(reply=user_says) as fake:
        target = target_file(folder / "target.toml", agent.base_url)
        config = folder / "abt.toml"
        config.write_text(
            f'[providers.sim]\ntype = "openai"\nbase_url = "{fake.base_url}"\napi_key_env = ""\n'
        )
        abt("simulate", "run", flows, "--target", target, "--out", out, "--skip-judge",
            "--user", "sim/user-model", "--config", config)  # fmt: skip
    return out


def bench_run(folder: Path) -> Path:
    """A bench run of two shop cases, one rollout each, graded."""
    benchmark = write_benchmark(folder / "shop", cases=2)
    out = folder / "bench"
    with FakeOpenAI(reply=scripted) as server:
        config = write_bench_config(folder / "bench.toml", fake=server.base_url)
        abt("bench", "run", benchmark, "--agent", "fake/agent-1", "--user", "scripted",
            "--out", out, "--config", config, "--no-cache", "--max-retries", "0")  # fmt: skip
    return out


def run_json(run: Path) -> dict[str, Any]:
    """A run's run.json."""
    document: dict[str, Any] = json.loads((run / "run.json").read_text())
    return document
