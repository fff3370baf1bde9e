"""Simulate's built-in ``model`` target and a bench episode are one agent loop: the same
exchange, with the same model server and the same tools, records the same trace steps."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agent_backtest.api.simulate import simulate_run
from agent_backtest.bench.environment import ToolOutcome
from agent_backtest.bench.episode import Agent, run_episode
from agent_backtest.bench.models import Case, EpisodeRules
from agent_backtest.bench.rollouts import Rollout
from agent_backtest.bench.users import ScriptedUser
from agent_backtest.providers import ModelClient, build_provider, load_model_config
from agent_backtest.providers.refs import parse_model_ref
from agent_backtest.trace import Session, Step
from tests.fake_openai import FakeOpenAI
from tests.simulate import model_tools
from tests.simulate.conftest import flows_file, scripted
from tests.simulate.test_model_target import agent_model, config_file, model_target

SYSTEM = "You keep notes."
SAID = ("note buy milk", "thanks")
SAVED = '{"length": 8, "saved": "buy milk"}'


class NotesEnvironment:
    """The model target's Python tools as a bench environment."""

    name = "notes"
    done = False

    def reset(self, case: Case) -> None:
        """Nothing to reset: the tools keep no state."""

    def tools(self) -> list[dict[str, Any]]:
        return model_tools.TOOLS

    def policy(self) -> str | None:
        return SYSTEM

    def call(self, tool: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        # the episode's event loop is running: the async tool gets a loop of its own
        with ThreadPoolExecutor(1) as thread:
            value = thread.submit(asyncio.run, _call(tool, dict(arguments))).result()
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        return ToolOutcome(text)

    def state_hash(self) -> str:
        return "stateless"


async def _call(tool: str, arguments: dict[str, Any]) -> Any:
    value = getattr(model_tools, tool)(**arguments)
    return await value if asyncio.iscoroutine(value) else value


def loop_steps(session: Session) -> list[tuple[str, Any]]:
    """The session's model calls and tool executions, as the agent loop made them."""
    return [_essence(step) for turn in session.turns for step in turn.steps if step.kind != "agent"]


def _essence(step: Step) -> tuple[str, Any]:
    if step.llm is not None:
        return "llm", step.llm.model_dump(mode="json")
    assert step.tool is not None
    tool = step.tool
    return "tool", (tool.name, tool.call_id, tool.arguments, tool.result, tool.error, step.status)


def test_a_simulate_conversation_and_a_bench_episode_record_the_same_steps(
    tmp_path: Path,
) -> None:
    with FakeOpenAI(reply=agent_model) as fake:
        config = config_file(tmp_path, fake)
        simulate_run(
            flows_file(tmp_path / "flows.jsonl", [scripted("notes", *SAID)]),
            target=model_target(tmp_path),
            out=tmp_path / "run",
            roles={"agent": "sim/agent-model"},
            config_file=config,
            skip_judge=True,
        )
        simulated = Session.model_validate_json((tmp_path / "run" / "sessions.jsonl").read_bytes())
        simulate_calls = fake.total
        manifest = json.loads((tmp_path / "run" / "run.json").read_text())

        ref = parse_model_ref("sim/agent-model", "agent")
        client = ModelClient(build_provider(ref, load_model_config(config)))
        case = Case(id="notes", instruction="keep notes")
        rollout = Rollout(case, 0, 0, "pg-0123456789abcdef", "notes--0123456--r000")
        user = ScriptedUser(list(SAID), "###STOP###")
        episode = asyncio.run(
            run_episode(
                rollout,
                NotesEnvironment,
                Agent(client, ref.model, ref.provider),
                user,
                EpisodeRules(max_steps=10),
                30,
            )
        )
    assert (episode.ended_by, episode.error) == ("stop_marker", None)
    bench_steps = [_essence(step) for turn in episode.turns for step in turn.steps]
    simulate_steps = loop_steps(simulated)
    # the run counts the agent role's calls as the server received them
    assert manifest["counts"]["agent"]["calls"] == simulate_calls == 3
    assert [kind for kind, _ in simulate_steps] == ["llm", "tool", "tool", "llm", "llm"]
    assert simulate_steps == bench_steps
    # the tools ran with the model's arguments, and their outputs went back to the model
    tools = [essence for kind, essence in bench_steps if kind == "tool"]
    assert tools == [
        ("add_note", "c0-add_note", {"text": "buy milk"}, SAVED, None, "ok"),
        ("count_words", "c1-count_words", {"text": "buy milk"}, "2", None, "ok"),
    ]
