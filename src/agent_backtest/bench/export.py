"""Training data from a bench run: SFT chat JSONL and RL prompt groups, with eligibility.

Every episode's eligibility is explicit, with its reasons:

* ``training_prohibited``: the benchmark (or the run) forbids training on its episodes;
  ``training_permission_unknown`` when the run records neither way, as an export must never
  guess that it may;
* ``engineering_error``: the episode has no reward (the model endpoint failed, the environment
  raised, grading could not run); ``ungraded``: it has no grade yet; ``missing_trace``: its trace
  cannot be read;
* SFT only: ``below_min_reward`` (the reward under ``min_reward``), and the strict audit's
  ``unknown_tool``, ``invalid_arguments`` and ``invalid_tool_schema`` (see :mod:`.audit`). An RL
  group keeps its low rewards and its mistakes: they are what its advantages learn from.

**SFT**: one line per eligible episode in OpenAI's fine-tuning chat format,
``{"messages": [...], "tools": [...]}`` with tool-call arguments as JSON strings (also what
Hugging Face ``datasets.load_dataset("json", ...)`` loads). **RL**: one line per prompt group with
its eligible members, their rewards and advantages (reward − the group's mean); a group without
an eligible member is left out, with its members' reasons. Each output gets a sidecar
``FILE.meta.json`` naming the source run, its commit and the benchmark's version, and every
episode's eligibility: the data file itself holds nothing but examples, so the loaders read it
as it is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import Field

from agent_backtest.bench.audit import audit
from agent_backtest.bench.models import EpisodeRecord
from agent_backtest.bench.reading import BenchRun, EpisodeTrace, error_kind, read_run
from agent_backtest.errors import UserError
from agent_backtest.record_model import StrictModel, TaggedRecord, schema_tag
from agent_backtest.runs import code_version, private_atomic_writer
from agent_backtest.runs.files import check_writable
from agent_backtest.trace import Message
from agent_backtest.trace.openai_wire import message_to_wire, tool_to_wire

EXPORT_SCHEMA = "abt.bench-export/1"
META_SUFFIX = ".meta.json"
ALL_MEMBERS_EXCLUDED = "all_members_excluded"


class Exclusion(StrictModel):
    """Why an episode is left out of an export: a named reason and the particulars."""

    reason: str
    detail: str


EPISODE_IDENTITY = {"episode_id", "case_id", "rollout", "prompt_group"}
"""The fields of an episode's record that its eligibility repeats, to name the episode."""


class Eligibility(StrictModel):
    """One episode's place in the exports: empty reasons mean it is in."""

    episode_id: str
    case_id: str
    rollout: int
    prompt_group: str
    reward: float | None
    sft: list[Exclusion] = Field(description="Why it is not an SFT example; [] when it is.")
    rl: list[Exclusion] = Field(description="Why it is not an RL group member; [] when it is.")


class ExportSource(StrictModel):
    """Where the examples come from."""

    run: str = Field(description="The run directory as given.")
    run_id: str | None
    commit: str | None = Field(description="The commit the run's agent code was at.")
    benchmark: str | None
    benchmark_version: str | None
    release: str | None
    exported_by: str = Field(description="The code version of the export itself.")


class ExportMeta(TaggedRecord):
    """``FILE.meta.json`` beside an export: its source, rows and every episode's eligibility."""

    schema_: Literal["abt.bench-export/1"] = schema_tag(EXPORT_SCHEMA)
    kind: Literal["sft", "rl"]
    file: str
    source: ExportSource
    min_reward: float | None = Field(description="SFT: the least reward an example has.")
    rows: int
    row_ids: list[str] = Field(description="The episode (SFT) or prompt group (RL) of each row.")
    excluded: dict[str, int] = Field(description="Episodes left out, by reason.")
    excluded_groups: dict[str, list[str]] = Field(
        default_factory=dict, description="RL: prompt groups left out, with their members' reasons."
    )
    eligibility: list[Eligibility]


@dataclass
class Written:
    """One export file written: its path, rows, and exclusions by reason."""

    path: Path
    rows: int
    excluded: Counter[str]
    excluded_groups: dict[str, list[str]] = field(default_factory=dict)

    @property
    def meta(self) -> Path:
        """The file beside it that names its source and every episode's eligibility."""
        return meta_path(self.path)


@dataclass
class ExportOutcome:
    """What an export wrote, and every episode's eligibility."""

    eligibility: list[Eligibility]
    sft: Written | None = None
    rl: Written | None = None


def export_training(
    run: Path,
    sft: Path | None = None,
    rl: Path | None = None,
    min_reward: float = 1.0,
    allow_partial: bool = False,
) -> ExportOutcome:
    """Write the eligible episodes of ``run`` as SFT examples to ``sft`` and/or RL groups to
    ``rl``, each with its ``.meta.json``; both outputs are checked before either is written."""
    if sft is None and rl is None:
        raise UserError("name an output: --sft FILE for chat examples, --rl FILE for groups", "sft")
    for path, parameter in ((sft, "sft"), (rl, "rl")):
        if path is not None:
            check_writable(path, parameter)
    read = read_run(run, allow_partial=allow_partial)
    traces = {e.episode_id: read.trace(e) for e in read.episodes}
    eligibility = [eligibility_of(read, e, traces[e.episode_id], min_reward) for e in read.episodes]
    outcome = ExportOutcome(eligibility)
    source = _source(run, read)
    if sft is not None:
        rows = [
            (item.episode_id, sft_example(trace))
            for item in eligibility
            if not item.sft and (trace := traces[item.episode_id]) is not None
        ]
        excluded = Counter(x.reason for item in eligibility for x in item.sft)
        outcome.sft = Written(sft, len(rows), excluded)
        _write(sft, "sft", rows, outcome.sft, source, eligibility, min_reward)
    if rl is not None:
        episodes = {e.episode_id: e for e in read.episodes}
        groups, left_out = rl_groups(eligibility, episodes, traces)
        excluded = Counter(x.reason for item in eligibility for x in item.rl)
        outcome.rl = Written(rl, len(groups), excluded, left_out)
        _write(rl, "rl", groups, outcome.rl, source, eligibility, None)
    return outcome


def eligibility_of(
    run: BenchRun, episode: EpisodeRecord, trace: EpisodeTrace | None, min_reward: float
) -> Eligibility:
    """Why ``episode`` is left out of each export, if it is."""
    grade = run.grade(episode)
    common = _permission(run)
    kind = error_kind(episode, grade)
    if kind is not None:
        detail = episode.error.detail if episode.error else "grading gave no reward"
        common.append(Exclusion(reason="engineering_error", detail=f"{kind}: {detail}"))
    elif grade is None:
        common.append(Exclusion(reason="ungraded", detail="no grade record yet"))
    if trace is None:
        common.append(
            Exclusion(reason="missing_trace", detail=f"no readable trace at {episode.trace}")
        )
    sft = list(common)
    reward = grade.reward if grade else None
    if reward is not None and reward < min_reward:
        sft.append(
            Exclusion(reason="below_min_reward", detail=f"reward {reward:g} < {min_reward:g}")
        )
    if trace is not None:
        sft += [
            Exclusion(reason=f.reason, detail=f.detail) for f in audit(trace.messages, trace.tools)
        ]
    identity = episode.model_dump(include=EPISODE_IDENTITY)
    return Eligibility(**identity, reward=reward, sft=sft, rl=common)


def _permission(run: BenchRun) -> list[Exclusion]:
    """The run-wide reason against training, if there is one."""
    facts = run.facts
    name = " ".join(p for p in (facts.benchmark, facts.benchmark_version, facts.release) if p)
    if facts.training_prohibited is True:
        return [
            Exclusion(
                reason="training_prohibited",
                detail=f"{name or 'the benchmark'} prohibits training on its episodes",
            )
        ]
    if facts.training_prohibited is None:
        return [
            Exclusion(
                reason="training_permission_unknown",
                detail="the run records no training_prohibited for its benchmark",
            )
        ]
    return []


def sft_example(trace: EpisodeTrace) -> dict[str, Any]:
    """One episode in OpenAI's fine-tuning chat format."""
    return {
        "messages": [wire_message(m) for m in trace.messages],
        "tools": [tool_to_wire(tool, [], []) for tool in trace.tools or ()],
    }


def wire_message(message: Message) -> dict[str, Any]:
    """A message as a chat example holds it: tool results as text answering their call's id."""
    wire = message_to_wire(message)
    if message.role == "tool":
        wire.pop("name", None)
        if wire["content"] is None:
            wire["content"] = ""
    return wire


def rl_groups(
    eligibility: Iterable[Eligibility],
    episodes: dict[str, EpisodeRecord],
    traces: dict[str, EpisodeTrace | None],
) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, list[str]]]:
    """The rows of the RL export by prompt group, and the groups left out with the reasons."""
    by_group: dict[str, list[Eligibility]] = {}
    for item in eligibility:
        by_group.setdefault(item.prompt_group, []).append(item)
    rows, left_out = [], {}
    for group, items in by_group.items():
        # an eligible member has a reward: errors and episodes not graded are not eligible
        members = [(i, i.reward) for i in items if not i.rl and i.reward is not None]
        if not members:
            left_out[group] = sorted({x.reason for item in items for x in item.rl})
            continue
        mean = sum(reward for _, reward in members) / len(members)
        first = traces[members[0][0].episode_id]
        rows.append(
            (
                group,
                {
                    "prompt_group": group,
                    "case_id": members[0][0].case_id,
                    "mean_reward": mean,
                    "tools": [
                        tool_to_wire(t, [], []) for t in (first.tools if first else ()) or ()
                    ],
                    "members": [
                        _member(m, reward, episodes[m.episode_id], traces[m.episode_id], mean)
                        for m, reward in members
                    ],
                },
            )
        )
    return rows, left_out


def _member(
    item: Eligibility,
    reward: float,
    episode: EpisodeRecord,
    trace: EpisodeTrace | None,
    mean: float,
) -> dict[str, Any]:
    return {
        "episode_id": item.episode_id,
        "rollout": item.rollout,
        "seed": episode.seed,
        "reward": reward,
        "advantage": reward - mean,
        "messages": [wire_message(m) for m in (trace.messages if trace else ())],
    }


def _source(run: Path, read: BenchRun) -> ExportSource:
    facts = read.facts
    return ExportSource(
        run=str(run),
        run_id=facts.run_id,
        commit=facts.commit,
        benchmark=facts.benchmark,
        benchmark_version=facts.benchmark_version,
        release=facts.release,
        exported_by=code_version(),
    )


def _write(
    path: Path,
    kind: Literal["sft", "rl"],
    rows: list[tuple[str, dict[str, Any]]],
    written: Written,
    source: ExportSource,
    eligibility: list[Eligibility],
    min_reward: float | None,
) -> None:
    """The data file, then its sidecar, each private and atomic."""
    meta = ExportMeta(
        kind=kind,
        file=path.name,
        source=source,
        min_reward=min_reward,
        rows=len(rows),
        row_ids=[row_id for row_id, _ in rows],
        excluded=dict(sorted(written.excluded.items())),
        excluded_groups=written.excluded_groups,
        eligibility=eligibility,
    )
    try:
        with private_atomic_writer(path) as handle:
            for _, row in rows:
                handle.write(orjson.dumps(row) + b"\n")
        with private_atomic_writer(meta_path(path)) as handle:
            document = meta.model_dump(mode="json", by_alias=True)
            handle.write(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    except OSError as exc:
        raise UserError(
            f"cannot write {path} ({exc.strerror}): name a file in a folder you can write", kind
        ) from None


def meta_path(path: Path) -> Path:
    """The sidecar of an export file: ``FILE.meta.json``."""
    return path.with_name(path.name + META_SUFFIX)
