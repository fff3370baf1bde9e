"""``run.json``: what a run was asked to do, on which inputs, by which code, and how it ended."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from agent_backtest.providers.config import ModelRole
from agent_backtest.record_model import StrictModel, schema_tag
from agent_backtest.runs.manifest_base import InputFile as InputFile
from agent_backtest.runs.manifest_base import ManifestBase
from agent_backtest.runs.manifest_base import RunCounts as RunCounts
from agent_backtest.runs.manifest_base import RunStatus as RunStatus
from agent_backtest.runs.manifest_base import code_version as code_version
from agent_backtest.runs.manifest_base import describe_input as describe_input
from agent_backtest.runs.manifest_base import now as now
from agent_backtest.units import AgentConfig

RUN_SCHEMA = "abt.run/2"


class PatchSettings(StrictModel):
    """The patch of a run, as run.json records it; the ops themselves are in patch.json."""

    file: str = Field(description="The patch file's name as given.")
    sha256: str = Field(description="sha256 of the patch file's bytes.")
    ops: list[str] = Field(description="The ops' ids, in order.")
    allow_unmatched: bool = False


class ReadSettings(StrictModel):
    """How trace inputs were read."""

    format: str | None = Field(default=None, description="The format forced on every input.")
    tools: str | None = Field(default=None, description="The --tools file, if one was given.")
    recorded_model: str | None = None
    strict: bool = False


class ReaderAccounting(StrictModel):
    """What the readers could not use, for a replay that read traces (not a units file)."""

    sessions: int = 0
    skipped_steps: dict[str, int] = Field(
        default_factory=dict, description="LLM steps that gave no unit, by reason."
    )
    skipped_records: dict[str, int] = Field(
        default_factory=dict, description="Records the readers skipped, by reason."
    )
    duplicate_sessions: int = Field(default=0, description="Sessions read twice, kept once.")


class ExclusionRecord(StrictModel):
    """The sessions a run left out (--exclude-sessions)."""

    file: str
    sessions: int = Field(description="Session ids the file holds.")
    matched: int = Field(description="How many of them the input held.")


class SelectionSettings(StrictModel):
    """How the units were chosen, and how many each filter left out."""

    steps: Literal["router", "action", "all"] = "all"
    nodes: list[str] = Field(default_factory=list)
    from_models: list[str] = Field(default_factory=list)
    agent_versions: list[str] = Field(default_factory=list)
    val_fraction: float | None = None
    split_salt: str | None = None
    split: Literal["test", "val", "all"] = "all"
    limit: int | None = None
    per_session: int | None = None
    excluded: ExclusionRecord | None = None
    reclassified: bool = Field(
        default=False, description="Units from a units file had their kind recomputed."
    )
    dropped: dict[str, int] = Field(default_factory=dict, description="Units left out, by filter.")


class BatchSettings(StrictModel):
    """A replay sent through the provider's batch API instead of live calls."""

    poll_seconds: float = Field(
        default=60.0, gt=0, description="The longest wait between two looks at a batch's status."
    )
    size: int | None = Field(
        default=None, ge=1, description="At most this many requests per batch (below the API's)."
    )
    custom_ids: str = Field(
        default="u<line of units.jsonl, from 0>-r<repeat>",
        description="How a request's custom_id names its (unit, repeat).",
    )


class BatchJob(StrictModel):
    """A provider batch of the run, recorded the moment the provider accepted it, before it
    is polled: a resume polls it and never sends its requests again."""

    id: str = Field(description="The provider's batch id.")
    model: str = Field(description="provider/model every request of the batch asks.")
    input_file_id: str | None = Field(default=None, description="OpenAI: the uploaded file.")
    requests: int
    bytes: int = Field(description="Size of the requests as sent.")
    status: str = Field(description="The provider's last reported status.")
    submitted_at: datetime
    ended_at: datetime | None = None
    collected: bool = Field(
        default=False, description="Its results are in results.jsonl; it is not polled again."
    )
    answered: int = 0
    errors: int = Field(default=0, description="Requests that ended in an error (by kind).")
    left: int = Field(
        default=0,
        description="Requests with no result (cancelled, or the batch failed): still to do, "
        "sent in a new batch by the next resume.",
    )
    problem: str | None = Field(default=None, description="Why the batch ran nothing.")


class BatchLog(StrictModel):
    """The batches of a batch replay."""

    jobs: list[BatchJob] = Field(default_factory=list)
    problem: str | None = Field(
        default=None,
        description="Why the last start could not submit or poll (redacted); a resume goes on.",
    )


class ReplaySettings(StrictModel):
    """Everything that decides what a replay sends and how it is scored; run.json's config."""

    roles: dict[str, ModelRole] = Field(
        description="The run's models by role: candidate, and judge and fallback_judge when set."
    )
    k: int = Field(default=1, ge=1, description="Repeats per unit.")
    seed: int = Field(default=0, description="Seed of repeat 0; repeat r uses seed + r.")
    config_file: str | None = Field(default=None, description="The model config (abt.toml).")
    reading: ReadSettings = Field(default_factory=ReadSettings)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    selection: SelectionSettings = Field(default_factory=SelectionSettings)
    patch: PatchSettings | None = Field(
        default=None,
        description="The patch applied to each request before it is sent (ops in patch.json).",
    )
    dry_run: bool = False
    batch: BatchSettings | None = Field(
        default=None, description="Sent through the provider's batch API (--batch)."
    )

    @property
    def candidate(self) -> ModelRole:
        """The role of the model under test."""
        return self.roles["candidate"]


class RunManifest(ManifestBase):
    """A replay's manifest; rewritten atomically whenever its status changes.

    ``roles`` is the same mapping as ``config.roles``: the base's place where every job names
    its models, and the settings that decide the answers (which a resume keeps as they were).
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    kind: Literal["replay"] = "replay"
    schema_: Literal["abt.run/2"] = schema_tag(RUN_SCHEMA)
    command: str = Field(description="The job: replay.")
    config: ReplaySettings = Field(description="Every setting that decides the answers.")
    labels: dict[str, str] = Field(
        default_factory=dict, description="--label KEY=VALUE: tells runs of teams or agents apart."
    )
    readers: ReaderAccounting | None = Field(
        default=None, description="What the readers skipped, when the run read traces."
    )
    error_examples: dict[str, str] = Field(
        default_factory=dict,
        description="One redacted message per infrastructure error kind the run met.",
    )
    timed_out_units: list[str] = Field(
        default_factory=list, description="Units whose every repeat ended in a timeout."
    )
    sessions: int = 0
    units: int = 0
    batches: BatchLog | None = Field(
        default=None, description="A batch replay's provider batches, each as it was created."
    )
    max_cost_usd: float | None = Field(
        default=None,
        description="The budget of the run's latest start (--max-cost): what every start of "
        "the run may spend in all, in USD.",
    )
    stop_reason: Literal["budget"] | None = Field(
        default=None,
        description="Why an interrupted run stopped, when no signal stopped it: budget, the "
        "spend reached --max-cost.",
    )

    @model_validator(mode="after")
    def _roles_are_the_config_roles(self) -> RunManifest:
        self.roles = self.config.roles
        return self

    @property
    def candidate_counts(self) -> RunCounts:
        """The candidate's calls, tokens and errors over every start of the run."""
        return self.counts.get("candidate", RunCounts())

    @classmethod
    def new(cls, config: ReplaySettings, **fields: Any) -> RunManifest:
        """A fresh replay manifest, made now by this code."""
        moment = now()
        return cls(
            command="replay",
            config=config,
            code_version=code_version(),
            created_at=moment,
            updated_at=moment,
            **fields,
        )
