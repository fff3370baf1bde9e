"""A bench run directory read back: what the run was, its episodes, their grades and traces.

``abt bench run`` writes the directory; the results and the training exports only read it. The
manifest is read typed, as the :class:`BenchRunManifest` the run wrote; the episodes and grades
as the record logs they are (``bench.run_files``): a torn last line (a writer killed mid-line)
is left out, and of two records of one (case, rollout) the first is kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson
from pydantic import Field, ValidationError

from agent_backtest.bench.models import BenchmarkManifest, EpisodeRecord, GradeRecord
from agent_backtest.bench.run_files import episodes_log, grades_log
from agent_backtest.bench.run_manifest import MANIFEST_FILE, BenchRunManifest
from agent_backtest.bench.users import DEFAULT_USER_PROMPT, USER_PROMPTS
from agent_backtest.errors import InputError, RecordError, UserError
from agent_backtest.input_files import read_bytes
from agent_backtest.record_model import StrictModel
from agent_backtest.runs.manifest_base import FINAL_STATUSES, run_kind
from agent_backtest.trace import LLMCall, Message, ToolDef
from agent_backtest.trace.openai_wire import message_from_openai

PASSED = 1.0 - 1e-9  # rewards are products of components: 1 within rounding is a pass
GRADING_ERROR = "grading_error"


class RunFacts(StrictModel):
    """What a bench run was, as far as its manifest says: every fact may be missing."""

    run_id: str | None = None
    status: str | None = None
    benchmark: str | None = None
    benchmark_version: str | None = None
    release: str | None = None
    training_prohibited: bool | None = None
    commit: str | None = None
    models: dict[str, str] = Field(default={})
    sampling: dict[str, dict[str, float | int]] = Field(
        default={},
        description="The sampling parameters the agent's and the user's requests carried, by "
        "role; a role with none took its provider's defaults.",
    )
    user: str | None = Field(
        default=None,
        description="Who played the user: the simulated user's prompt (abt, tau), scripted, "
        "or None when no case had a user.",
    )
    base_seed: int | None = None

    def setup(self) -> str:
        """How the run was set up, as a label beside the benchmark's: which user prompt, and
        the agent's and the user's sampling; what makes its figures comparable or not."""
        parts = []
        if self.user in USER_PROMPTS:
            prompt = USER_PROMPTS[self.user]
            parts.append(f"user prompt {prompt.name} ({prompt.description})")
        elif self.user is not None:
            parts.append(f"{self.user} user")
        for role in ("agent", "user"):
            if role not in self.models:
                continue
            given = self.sampling.get(role) or {}
            said = ", ".join(f"{name} {value:g}" for name, value in given.items())
            parts.append(f"{role} {said or 'sampling as the provider defaults'}")
        return " · ".join(parts)


@dataclass
class BenchRun:
    """One bench run directory, read: its facts, episodes in file order, grades by key."""

    path: Path
    facts: RunFacts
    episodes: list[EpisodeRecord]
    grades: dict[tuple[str, int], GradeRecord] = field(default_factory=dict)

    def grade(self, episode: EpisodeRecord) -> GradeRecord | None:
        """The grade of ``episode``, or None while it has none."""
        return self.grades.get(episode.key)

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
    facts = run_facts(read_manifest(path))
    if facts.status not in FINAL_STATUSES and not allow_partial:
        raise UserError(
            f"{path} is still {facts.status or 'without a status'}: its episodes are not all "
            "in; wait for abt bench run to end, or pass --allow-partial to use what is there",
            "allow_partial",
        )
    episodes = list(episodes_log(path).read())
    grades = {grade.key: grade for grade in grades_log(path).read()}
    return BenchRun(path, facts, episodes, grades)


def read_manifest(path: Path) -> BenchRunManifest:
    """The run.json of the bench run at ``path``; a folder that holds no bench run fails with
    what it holds."""
    if not path.is_dir():
        raise InputError(path, None, "not a folder: name a bench run directory (abt bench run)")
    if not (path / MANIFEST_FILE).is_file():
        raise InputError(
            path, None, f"no {MANIFEST_FILE}: not a bench run directory (abt bench run makes one)"
        )
    kind = run_kind(path)
    if kind != "bench":
        raise InputError(
            path / MANIFEST_FILE,
            "kind",
            f"{kind!r} is not a bench run: for a {kind} run use abt report",
        )
    try:
        return BenchRunManifest.load(path / MANIFEST_FILE)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or None
        raise InputError(
            path / MANIFEST_FILE, where, f"not a bench run manifest: {error['msg']}"
        ) from None


def run_facts(manifest: BenchRunManifest) -> RunFacts:
    """The facts of a run's manifest that its results name. Training is prohibited when the
    run recorded so or the benchmark's own manifest, where the run found it, says so now."""
    benchmark = manifest.benchmark
    local = _benchmark_manifest(Path(benchmark.path))  # abt bench run records it resolved
    return RunFacts(
        run_id=manifest.run_id,
        status=manifest.status,
        benchmark=benchmark.name or None,
        benchmark_version=benchmark.version or None,
        release=benchmark.release or None,
        training_prohibited=benchmark.training_prohibited
        or (local is not None and local.training_prohibited),
        commit=manifest.git_commit or manifest.code_version or None,
        models={role: settings.model for role, settings in manifest.roles.items()},
        sampling={
            role: settings.sampling
            for role, settings in manifest.roles.items()
            if settings.sampling
        },
        user=_user(manifest),
        base_seed=manifest.rollout.base_seed,
    )


def _user(manifest: BenchRunManifest) -> str | None:
    """Who played the run's user (see :attr:`RunFacts.user`); a run recorded before the
    prompt was chosen had abt's."""
    if "user" in manifest.roles:
        return manifest.user_prompt or DEFAULT_USER_PROMPT
    return "scripted" if manifest.scripted_user else None


def _benchmark_manifest(folder: Path) -> BenchmarkManifest | None:
    """The benchmark's own manifest, when the folder the run names still holds it."""
    try:
        data = read_bytes(folder / "manifest.json", "benchmark manifest")
        return BenchmarkManifest.model_validate_json(data)
    except (InputError, ValidationError, ValueError):
        return None


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
        document = orjson.loads(read_bytes(path, "episode's trace"))
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
        InputError,
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
