"""A bench run directory read back: what the run was, its episodes, their grades and traces.

``abt bench run`` writes the directory; the results and the training exports only read it. The
manifest is read defensively (a field this reader does not know is ignored, one it misses stays
``None``), the record files tolerantly: a torn last line (a writer killed mid-line) is left out,
and of two records of one (case, rollout) the first is kept, as ``runs/records.py`` does for
results.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from agent_backtest.bench.models import BenchmarkManifest, EpisodeRecord, GradeRecord
from agent_backtest.bench.run_manifest import BENCH_RUN_SCHEMA
from agent_backtest.errors import InputError, RecordError, UserError
from agent_backtest.trace import LLMCall, Message, ToolDef
from agent_backtest.trace.openai_wire import message_from_openai

MANIFEST = "run.json"
EPISODES = "episodes.jsonl"
GRADES = "grades.jsonl"
FINISHED = ("completed", "completed_with_errors", "failed", "interrupted")
PASSED = 1.0 - 1e-9  # rewards are products of components: 1 within rounding is a pass
GRADING_ERROR = "grading_error"

Keyed = TypeVar("Keyed", EpisodeRecord, GradeRecord)


class RunFacts(BaseModel):
    """What a bench run was, as far as its manifest says: every fact may be missing."""

    model_config = ConfigDict(extra="forbid")

    run_id: str | None = None
    status: str | None = None
    benchmark: str | None = None
    benchmark_version: str | None = None
    release: str | None = None
    training_prohibited: bool | None = None
    commit: str | None = None
    models: dict[str, str] = {}
    base_seed: int | None = None


@dataclass
class BenchRun:
    """One bench run directory, read: its facts, episodes in file order, grades by key."""

    path: Path
    facts: RunFacts
    episodes: list[EpisodeRecord]
    grades: dict[tuple[str, int], GradeRecord] = field(default_factory=dict)

    def grade(self, episode: EpisodeRecord) -> GradeRecord | None:
        """The grade of ``episode``, or None while it has none."""
        return self.grades.get(record_key(episode))

    def trace(self, episode: EpisodeRecord) -> EpisodeTrace | None:
        """The episode's conversation and tools, or None when its trace is absent or unreadable."""
        return read_trace(self.path / episode.trace)


def error_kind(episode: EpisodeRecord, grade: GradeRecord | None) -> str | None:
    """The engineering error that left ``episode`` without a reward, or None."""
    if episode.error is not None:
        return episode.error.kind
    if grade is not None and grade.reward is None:
        return GRADING_ERROR
    return None


def passed(reward: float | None) -> bool | None:
    """Whether a reward is a pass; None without a reward."""
    return None if reward is None else reward >= PASSED


def read_run(path: Path, allow_partial: bool = False) -> BenchRun:
    """Read the bench run at ``path``; a run still ``running`` only with ``allow_partial``."""
    manifest = _manifest(path)
    facts = run_facts(manifest, path)
    if facts.status not in FINISHED and not allow_partial:
        raise UserError(
            f"{path} is still {facts.status or 'without a status'}: its episodes are not all "
            "in; wait for abt bench run to end, or pass --allow-partial to use what is there",
            "allow_partial",
        )
    episodes = list(_records(path / EPISODES, EpisodeRecord))
    grades = {record_key(grade): grade for grade in _records(path / GRADES, GradeRecord)}
    return BenchRun(path, facts, episodes, grades)


def _manifest(path: Path) -> dict[str, Any]:
    file = path / MANIFEST
    if not path.is_dir():
        raise InputError(path, None, "not a folder: name a bench run directory (abt bench run)")
    try:
        manifest = orjson.loads(file.read_bytes())
    except OSError:
        raise InputError(
            path, None, f"no {MANIFEST}: not a bench run directory (abt bench run makes one)"
        ) from None
    except orjson.JSONDecodeError as exc:
        raise InputError(file, None, f"not JSON ({exc})") from None
    schema = manifest.get("schema") if isinstance(manifest, dict) else None
    if schema != BENCH_RUN_SCHEMA:
        raise InputError(
            file,
            "schema",
            f"{schema!r} is not a bench run ({BENCH_RUN_SCHEMA}): for a replay run use abt report",
        )
    return manifest


def run_facts(manifest: Mapping[str, Any], path: Path) -> RunFacts:
    """The facts of a manifest, each looked for where a bench run may keep it."""
    benchmark = _mapping(manifest.get("benchmark"))
    local = _benchmark_manifest(benchmark, path)
    prohibited = [
        value
        for value in (
            manifest.get("training_prohibited"),
            benchmark.get("training_prohibited"),
            local.training_prohibited if local else None,
        )
        if isinstance(value, bool)
    ]
    return RunFacts(
        run_id=_text(manifest.get("run_id")),
        status=_text(manifest.get("status")),
        benchmark=_text(benchmark.get("name")) or (local.name if local else None),
        benchmark_version=_text(benchmark.get("version")) or (local.version if local else None),
        release=_text(benchmark.get("release")) or (local.release if local else None),
        training_prohibited=any(prohibited) if prohibited else None,
        commit=_text(manifest.get("git_commit")) or _text(manifest.get("code_version")),
        models=_models(manifest.get("roles")),
        base_seed=_integer(
            manifest.get("base_seed", _mapping(manifest.get("rollout")).get("base_seed"))
        ),
    )


def _benchmark_manifest(benchmark: Mapping[str, Any], run: Path) -> BenchmarkManifest | None:
    """The benchmark's own manifest, when the run names a directory that still holds it."""
    where = _text(benchmark.get("path"))
    if where is None:
        return None
    folder = Path(where) if Path(where).is_absolute() else run / where
    try:
        return BenchmarkManifest.model_validate_json((folder / "manifest.json").read_bytes())
    except (OSError, ValidationError, ValueError):
        return None


def _models(roles: Any) -> dict[str, str]:
    """Each role's model reference, from ``{role: {model: …}}`` or ``{role: "ref"}``."""
    found = {}
    for role, settings in _mapping(roles).items():
        model = settings.get("model") if isinstance(settings, Mapping) else settings
        if isinstance(model, str):
            found[str(role)] = model
    return found


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def record_key(record: EpisodeRecord | GradeRecord) -> tuple[str, int]:
    """(case_id, rollout): what an episode and its grade share."""
    return record.case_id, record.rollout


def _records(path: Path, model: type[Keyed]) -> Iterator[Keyed]:
    """The whole records of a JSONL file, the first of each (case, rollout) only."""
    if not path.exists():
        return
    lines = path.read_bytes().split(b"\n")
    seen: set[tuple[str, int]] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = model.model_validate(orjson.loads(line))
        except (orjson.JSONDecodeError, ValidationError) as exc:
            if number == len(lines):  # the last line, with no newline after it: torn
                continue
            raise InputError(path, f"line {number}", f"not a {model.__name__}: {exc}") from None
        if record_key(record) not in seen:
            seen.add(record_key(record))
            yield record


@dataclass(frozen=True)
class EpisodeTrace:
    """What the results and exports use of an episode's trace."""

    messages: list[Message]
    """The conversation as the agent last saw it, its last answer included."""
    tools: list[ToolDef] | None
    """The tools the agent's last call was offered; None when no call recorded them."""


def read_trace(path: Path) -> EpisodeTrace | None:
    """The conversation and tools of the canonical session at ``path``; None if unreadable.

    A bench trace keeps the conversation in ``metadata.transcript`` (OpenAI chat messages, the
    tool calls that did not run left out); a trace without it gives the last agent call's
    request and answer. Only what is used is validated: a long run's traces are large, as
    every call's request holds the conversation so far.
    """
    try:
        document = orjson.loads(path.read_bytes())
        calls = [
            step["llm"]
            for turn in document.get("turns") or ()
            for step in turn.get("steps") or ()
            if isinstance(step, dict) and isinstance(step.get("llm"), dict)
        ]
        offered = next(
            (
                c["request"]["tools"]
                for c in reversed(calls)
                if c["request"].get("tools") is not None
            ),
            None,
        )
        tools = None if offered is None else [ToolDef.model_validate(t) for t in offered]
        kept = (document.get("metadata") or {}).get("transcript")
        if isinstance(kept, list):
            return EpisodeTrace([message_from_openai(raw) for raw in kept], tools)
        if not calls:
            return EpisodeTrace([], tools)
        last = LLMCall.model_validate(calls[-1])
    except (
        OSError,
        orjson.JSONDecodeError,
        ValidationError,
        RecordError,
        LookupError,
        TypeError,
        AttributeError,
    ):
        return None
    answer = [last.response.message] if last.response else []
    return EpisodeTrace([*last.request.messages, *answer], tools)
