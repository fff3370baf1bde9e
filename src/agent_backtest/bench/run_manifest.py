"""``run.json`` of a bench run: what was asked, of which benchmark, by which code, how it ended.

A bench run directory holds::

    run.json            BenchRunManifest, rewritten atomically whenever the run's state changes
    episodes.jsonl      one EpisodeRecord a line, appended the moment each episode ends
    traces/EPISODE.json each episode as a canonical session (abt show, units, profile read it)
    grades.jsonl        one GradeRecord a line, written once every rollout has ended

Everything that decides which episodes the run has is recorded, so ``--resume`` plans exactly
the episodes the first start planned and runs only those without a record.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from agent_backtest.bench.models import EpisodeRules
from agent_backtest.providers.config import ModelRole
from agent_backtest.record_model import StrictModel, schema_tag
from agent_backtest.runs.manifest_base import ManifestBase

BENCH_RUN_SCHEMA = "abt.bench_run/1"
MANIFEST_FILE = "run.json"
EPISODES_FILE = "episodes.jsonl"
GRADES_FILE = "grades.jsonl"


class BenchmarkDescriptor(StrictModel):
    """The benchmark a run rolled out, identified by content (the gold is not in it)."""

    path: str
    name: str
    version: str
    release: str
    training_prohibited: bool
    sha256: str = Field(description="sha256 of manifest.json and cases.jsonl.")


class GoldDescriptor(StrictModel):
    """The gold file grading read, added once it was read (never before the rollouts ended)."""

    path: str
    sha256: str


class CaseSelectionSettings(StrictModel):
    """How the cases were chosen, and which were."""

    case_ids: list[str] = Field(default_factory=list, description="--case-id, in order.")
    shard_count: int = 1
    shard_index: int = 0
    limit: int | None = None
    selected: list[str] = Field(description="The cases the run has, in order.")


class RolloutSettings(StrictModel):
    """How many episodes per case, their seeds, and how they run."""

    rollouts: int = Field(ge=1, description="Episodes per case.")
    base_seed: int
    seed_derivation: str
    prompt_group_derivation: str
    concurrency: int = Field(ge=1, description="Episodes at once.")
    episode_timeout: float = Field(gt=0, description="Seconds an episode may take at most.")


class BenchRunManifest(ManifestBase):
    """The bench run's manifest."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["bench"] = "bench"
    schema_: Literal["abt.bench_run/1"] = schema_tag(BENCH_RUN_SCHEMA)
    run_id: str
    command: Literal["bench run"] = "bench run"
    git_commit: str | None = Field(default=None, description="GIT_COMMIT as given, if set.")
    benchmark: BenchmarkDescriptor
    gold: GoldDescriptor | None = None
    environment: str = Field(description="The manifest's environment (a case may name another).")
    policy_revisions: dict[str, str] = Field(
        description="sha256 of each environment's policy and tools, by environment name."
    )
    roles: dict[str, ModelRole] = Field(description="agent, user (unless scripted), judge.")
    scripted_user: bool = Field(description="The user plays each case's script, not a model.")
    user_prompt: str | None = Field(
        default=None,
        description="The simulated user's system prompt (abt, tau); None without a simulated user.",
    )
    rules: EpisodeRules
    graders: list[str]
    selection: CaseSelectionSettings
    rollout: RolloutSettings
    config_file: str | None = None
    episodes: int = Field(description="Episodes the run has: cases × rollouts.")
    errors: dict[str, int] = Field(
        default_factory=dict, description="Episodes that ended in an engineering error, by kind."
    )
    grading_error: str | None = Field(
        default=None, description="Why grading could not run (the gold, a judge); resume retries."
    )
