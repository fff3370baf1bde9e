"""Simulate runs played through the agent server and judged by a scripted judge that answers
each flow as told: the earlier runs that selection, coverage and the ledger read."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.fake_openai import FakeOpenAI
from tests.simulate.agent_server import AgentServer, read_log
from tests.simulate.conftest import abt, flows_file, scripted, target_file
from tests.simulate.judge_runs import FAIL, PASS, flow_of, replies, write_config

FAIL_ROUTING = {
    **FAIL,
    "owner": "agent_routing",
    "failure_category": "wrong_tool",
    "evidence": "Turn 1 answers from memory where the calendar tool had to be asked.",
}
UNCERTAIN = {
    "verdict": "uncertain",
    "score": 50,
    "owner": "none",
    "failure_category": "",
    "failed_turns": [],
    "evidence": "The user's request could mean either of two notes; the answer picks one.",
}


def flow(flow_id: str, family: str, seed_id: str | None = None) -> dict[str, Any]:
    """A one-turn scripted flow whose message names it (so the agent's log shows it played)."""
    fields = {"seed_id": seed_id} if seed_id else {}
    return scripted(flow_id, f"hello from {flow_id}", family=family, **fields)


def played(agent: AgentServer) -> list[str]:
    """The flows whose message reached the agent, in the order they did."""
    return [
        entry["message"].removeprefix("hello from ")
        for entry in read_log(agent.log)
        if "message" in entry
    ]


class Judged:
    """A scripted judge on 127.0.0.1 answering each flow by its id, the config naming it, and
    the target file of the agent server."""

    def __init__(self, tmp_path: Path, agent: AgentServer, judge: FakeOpenAI) -> None:
        self.tmp_path = tmp_path
        self.judge = judge
        self.config = write_config(tmp_path, ("main", judge.base_url))
        self.target = target_file(tmp_path / "target.toml", agent.base_url)

    def run(self, out: str, flows: list[dict[str, Any]] | None, *extra: object) -> tuple[int, str]:
        """``abt simulate run`` of these flows (None: no FLOWS argument) into ``out``."""
        name = out.replace("/", "-")
        given = [flows_file(self.tmp_path / f"{name}.flows.jsonl", flows)] if flows else []
        return abt(
            "simulate", "run", *given, "--target", self.target, "--out", out,
            "--judge", "main/grader", "--config", self.config, *extra,
        )  # fmt: skip


@contextmanager
def judged(
    tmp_path: Path, agent: AgentServer, answers: Mapping[str, dict[str, Any]]
) -> Iterator[Judged]:
    """A judge answering ``answers[flow id]`` (a pass for a flow not named)."""
    with FakeOpenAI(reply=replies(lambda body: answers.get(flow_of(body), PASS))) as judge:
        yield Judged(tmp_path, agent, judge)
