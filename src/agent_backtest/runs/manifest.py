"""``run.json``: what a run was asked to do, on which inputs, by which code, and how it ended."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_backtest.providers.config import ModelRole
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.units import AgentConfig

RUN_SCHEMA = "abt.run/2"
RunStatus = Literal["running", "completed", "completed_with_errors", "interrupted", "failed"]


class InputFile(BaseModel):
    """An input of the run, identified by content."""

    model_config = ConfigDict(extra="forbid")

    path: str
    sha256: str
    bytes: int


class PatchSettings(BaseModel):
    """The patch of a run, as run.json records it; the ops themselves are in patch.json."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="The patch file's name as given.")
    sha256: str = Field(description="sha256 of the patch file's bytes.")
    ops: list[str] = Field(description="The ops' ids, in order.")
    allow_unmatched: bool = False


class ReadSettings(BaseModel):
    """How trace inputs were read."""

    model_config = ConfigDict(extra="forbid")

    format: str | None = Field(default=None, description="The format forced on every input.")
    tools: str | None = Field(default=None, description="The --tools file, if one was given.")
    recorded_model: str | None = None
    strict: bool = False


class ReaderAccounting(BaseModel):
    """What the readers could not use, for a replay that read traces (not a units file)."""

    model_config = ConfigDict(extra="forbid")

    sessions: int = 0
    skipped_steps: dict[str, int] = Field(
        default_factory=dict, description="LLM steps that gave no unit, by reason."
    )
    skipped_records: dict[str, int] = Field(
        default_factory=dict, description="Records the readers skipped, by reason."
    )
    duplicate_sessions: int = Field(default=0, description="Sessions read twice, kept once.")


class ExclusionRecord(BaseModel):
    """The sessions a run left out (--exclude-sessions)."""

    model_config = ConfigDict(extra="forbid")

    file: str
    sessions: int = Field(description="Session ids the file holds.")
    matched: int = Field(description="How many of them the input held.")


class SelectionSettings(BaseModel):
    """How the units were chosen, and how many each filter left out."""

    model_config = ConfigDict(extra="forbid")

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


class BatchSettings(BaseModel):
    """A replay sent through the provider's batch API instead of live calls."""

    model_config = ConfigDict(extra="forbid")

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


class BatchJob(BaseModel):
    """A provider batch of the run, recorded the moment the provider accepted it, before it
    is polled: a resume polls it and never sends its requests again."""

    model_config = ConfigDict(extra="forbid")

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


class BatchLog(BaseModel):
    """The batches of a batch replay."""

    model_config = ConfigDict(extra="forbid")

    jobs: list[BatchJob] = Field(default_factory=list)
    problem: str | None = Field(
        default=None,
        description="Why the last start could not submit or poll (redacted); a resume goes on.",
    )


class ReplaySettings(BaseModel):
    """Everything that decides what a replay sends and how it is scored; run.json's config."""

    model_config = ConfigDict(extra="forbid")

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


class RunCounts(BaseModel):
    """What the run's calls cost and gave, over every start of the run."""

    model_config = ConfigDict(extra="forbid")

    calls: int = Field(default=0, description="HTTP attempts sent (retries included).")
    cache_hits: int = 0
    retries: int = 0
    credential_refreshes: int = 0
    cache_write_errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    model_load_seconds: float = Field(
        default=0.0,
        description="Seconds an in-process model took to load, kept out of every latency.",
    )
    errors: dict[str, int] = Field(
        default_factory=dict, description="Calls that ended in an infrastructure error, by kind."
    )

    def plus(self, other: dict[str, Any]) -> RunCounts:
        """These counts with a later start's (or the live counters') added."""
        merged = self.model_dump()
        for key, value in other.items():
            if key not in merged:
                continue
            if isinstance(value, dict):
                total = dict(merged[key])
                for sub, count in value.items():
                    total[sub] = total.get(sub, 0) + count
                merged[key] = dict(sorted(total.items()))
            else:
                merged[key] += value
        return RunCounts.model_validate(merged)


class RunManifest(BaseModel):
    """The run's manifest; rewritten atomically whenever its status changes."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["abt.run/2"] = Field(default=RUN_SCHEMA, alias="schema")
    status: RunStatus = "running"
    command: str = Field(description="The job: replay.")
    config: ReplaySettings = Field(description="Every setting that decides the answers.")
    inputs: list[InputFile] = Field(default_factory=list)
    labels: dict[str, str] = Field(
        default_factory=dict, description="--label KEY=VALUE: tells runs of teams or agents apart."
    )
    code_version: str
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None
    counts: RunCounts = Field(default_factory=RunCounts)
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
    attempts_of_run: int = Field(default=1, description="1 + the number of resumes.")
    batches: BatchLog | None = Field(
        default=None, description="A batch replay's provider batches, each as it was created."
    )

    def save(self, path: Path) -> None:
        """Write atomically (mode 0600)."""
        self.updated_at = now()
        with private_atomic_writer(path) as handle:
            handle.write(self.model_dump_json(by_alias=True, indent=2).encode() + b"\n")

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

    @classmethod
    def load(cls, path: Path) -> RunManifest:
        """Read a manifest."""
        return cls.model_validate_json(path.read_bytes())


def now() -> datetime:
    """The current UTC time."""
    return datetime.now(UTC)


def describe_input(path: Path) -> InputFile:
    """An input file with its content hash, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return InputFile(path=str(path), sha256=digest.hexdigest(), bytes=path.stat().st_size)


def code_version() -> str:
    """Which code made the run: ``git:<commit>`` (``+dirty`` with local changes) when the
    package runs from a checkout, else the package version and a hash of its installed files."""
    package = Path(__file__).resolve().parents[1]
    commit = _git_commit(package)
    if commit is not None:
        return commit
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("agent-backtest")
    except PackageNotFoundError:
        installed = "unknown"
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".md", ".html", ".css", ".js"):
            digest.update(path.relative_to(package).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return f"{installed}+sha256:{digest.hexdigest()[:16]}"


def _git_commit(package: Path) -> str | None:
    """The checkout's commit, when ``package`` is inside a git work tree."""
    import os
    import subprocess

    checkout = package.parent.parent  # src/agent_backtest → the repository
    if not (checkout / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
            # no index refresh: a stopped abt must never leave index.lock in the checkout
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"git:{head}" + ("+dirty" if dirty else "")
