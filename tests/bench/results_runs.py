"""Bench run directories made from real τ-bench trajectories, for the results and export tests.

Each trajectory of the GPT-4o airline sample (tasks 0–24, 4 trials each) becomes one episode:
its ``traj`` the transcript (one LLM step per assistant message, with the messages before it and
the 14 airline tools as its request), its recorded ``reward`` the grade, with τ-bench's own
``r_actions`` and ``r_outputs`` as the components where it recorded them. The records, the
sessions and the manifest are the project's own models written as ``abt bench run`` writes them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from agent_backtest.bench.models import EpisodeError, EpisodeRecord, EpisodeRules, GradeRecord
from agent_backtest.bench.run_manifest import (
    BenchmarkDescriptor,
    BenchRunManifest,
    CaseSelectionSettings,
    RolloutSettings,
)
from agent_backtest.providers.config import ModelRole
from agent_backtest.trace import LLMCall, LLMRequest, LLMResponse, Session, Step, Turn, dump_record
from agent_backtest.trace.openai_wire import message_from_openai, tools_from_openai
from tests.conftest import TAU_TOOLS, TAU_TRAJECTORIES

PLANTED = "<script>window.__planted = 1</script>"


@dataclass(frozen=True)
class Episode:
    """One episode as a run directory holds it: its record, its grade (or none) and trace."""

    record: EpisodeRecord
    grade: GradeRecord | None
    session: Session

    def failed(self, kind: str = "model_timeout") -> Episode:
        """The same episode ended by an engineering error: no reward."""
        error = EpisodeError(kind=kind, detail=f"{kind} after 30 s")
        record = self.record.model_copy(update={"error": error, "ended_by": "error"})
        grade = self.grade.model_copy(update={"reward": None, "components": {}, "reasons": {}})
        return replace(self, record=record, grade=grade)

    def ungraded(self) -> Episode:
        """The same episode before grading."""
        return replace(self, grade=None)

    def rewarded(self, reward: float) -> Episode:
        """The same episode with another reward."""
        return replace(self, grade=self.grade.model_copy(update={"reward": reward}))

    def with_transcript(self, messages: list[dict[str, Any]]) -> Episode:
        """The same episode whose trace holds ``messages`` as its conversation."""
        metadata = {**self.session.metadata, "transcript": messages}
        return replace(self, session=self.session.model_copy(update={"metadata": metadata}))


@cache
def trajectories() -> list[dict[str, Any]]:
    """The 100 recorded trajectories."""
    return json.loads(TAU_TRAJECTORIES.read_text(encoding="utf-8"))


@cache
def airline_tools() -> list[dict[str, Any]]:
    """The 14 airline tools in the OpenAI function format."""
    return json.loads(TAU_TOOLS.read_text(encoding="utf-8"))


def tau_episodes(tasks: Iterable[int] | None = None) -> list[Episode]:
    """The episodes of the given tasks (every task when None), in the file's order."""
    wanted = None if tasks is None else set(tasks)
    return [
        episode_of(item) for item in trajectories() if wanted is None or item["task_id"] in wanted
    ]


def episode_of(item: dict[str, Any]) -> Episode:
    """One recorded trajectory as a bench episode."""
    task, trial = item["task_id"], item["trial"]
    episode_id = f"ep-task{task:02d}-r{trial}"
    messages = [message_from_openai(raw) for raw in item["traj"]]
    tools = tools_from_openai(airline_tools())
    steps = [
        Step(
            id=f"call-{index}",
            kind="llm",
            llm=LLMCall(
                request=LLMRequest(model="gpt-4o", messages=messages[:index], tools=tools),
                response=LLMResponse(message=message),
            ),
        )
        for index, message in enumerate(messages)
        if message.role == "assistant"
    ]
    session = Session(
        id=episode_id,
        turns=[Turn(index=0, steps=steps)],
        metadata={"case_id": str(task), "rollout": trial, "transcript": item["traj"]},
    )
    record = EpisodeRecord(
        episode_id=episode_id,
        case_id=str(task),
        rollout=trial,
        seed=1000 * task + trial,
        prompt_group=f"pg-task{task:02d}",
        ended_by="stop_marker",
        steps=len(steps),
        tool_calls=sum(m.role == "tool" for m in messages),
        model_calls=len(steps),
        seconds=2.5 * len(steps),
        trace=f"traces/{episode_id}.json",
    )
    return Episode(record, _grade(item, record), session)


def _grade(item: dict[str, Any], record: EpisodeRecord) -> GradeRecord:
    """The recorded reward, with τ-bench's r_actions and r_outputs as components."""
    info = (item["info"].get("reward_info") or {}).get("info") or {}
    components: dict[str, float | None] = {
        "final_state": info.get("r_actions"),
        "outputs": info.get("r_outputs"),
    }
    reasons = (
        {"final_state": "the database differs from the gold's"}
        if not info.get("r_actions", 1)
        else {}
    )
    return GradeRecord(
        episode_id=record.episode_id,
        case_id=record.case_id,
        rollout=record.rollout,
        reward=item["reward"],
        components=components,
        reasons=reasons,
    )


def manifest(**changes: Any) -> dict[str, Any]:
    """The run.json of a finished run of the airline benchmark, as abt bench run writes it
    (four rollouts of the 25 recorded tasks); ``changes`` replace its keys."""
    moment = datetime(2026, 12, 1, tzinfo=UTC)
    written = BenchRunManifest(
        run_id="bench-20261201-airline",
        status="completed",
        code_version="git:0123456789abcdef0123456789abcdef01234567",
        git_commit="0123456789abcdef0123456789abcdef01234567",
        benchmark=BenchmarkDescriptor(
            path="tau_airline",  # no such folder: the recorded descriptor is all there is
            name="tau_airline",
            version="2024.06",
            release="test",
            training_prohibited=False,
            sha256="0" * 64,
        ),
        environment="tau_airline",
        policy_revisions={"tau_airline": "0" * 64},
        roles={
            "agent": ModelRole(name="agent", model="openai/gpt-4o"),
            "user": ModelRole(name="user", model="openai/gpt-4o"),
        },
        scripted_user=False,
        rules=EpisodeRules(),
        graders=["tau_airline.final_state", "tau_airline.outputs"],
        selection=CaseSelectionSettings(selected=[str(task) for task in range(25)]),
        rollout=RolloutSettings(
            rollouts=4,
            base_seed=0,
            seed_derivation="1000 * task + trial",
            prompt_group_derivation="pg-task<task>",
            concurrency=1,
            episode_timeout=600.0,
        ),
        episodes=100,
        created_at=moment,
        updated_at=moment,
        finished_at=moment,
    )
    document: dict[str, Any] = json.loads(written.model_dump_json(by_alias=True))
    document.update(changes)
    return document


def write_run(
    path: Path,
    episodes: Iterable[Episode],
    run_json: dict[str, Any] | None = None,
    tail: Callable[[bytes], bytes] = lambda text: text,
) -> Path:
    """A run directory holding ``episodes``; ``tail`` may change the bytes of episodes.jsonl."""
    episodes = list(episodes)
    (path / "traces").mkdir(parents=True)
    (path / "run.json").write_text(json.dumps(run_json or manifest()), encoding="utf-8")
    lines = b"".join(dump_record(e.record) + b"\n" for e in episodes)
    (path / "episodes.jsonl").write_bytes(tail(lines))
    grades = [e.grade for e in episodes if e.grade is not None]
    # every field, None too, as abt bench run writes grades: a grade without a reward says so
    lines = b"".join(g.model_dump_json(by_alias=True).encode() + b"\n" for g in grades)
    (path / "grades.jsonl").write_bytes(lines)
    for episode in episodes:
        (path / episode.record.trace).write_bytes(dump_record(episode.session) + b"\n")
    return path
