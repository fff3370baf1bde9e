"""``run.json``: what a run was asked to do, on which inputs, by which code, and how it ended."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_backtest.runs.files import private_atomic_writer

RUN_SCHEMA = "abt.run/1"
RunStatus = Literal["running", "completed", "interrupted", "failed"]


class InputFile(BaseModel):
    """An input of the run, identified by content."""

    model_config = ConfigDict(extra="forbid")

    path: str
    sha256: str
    bytes: int


class RunManifest(BaseModel):
    """The run's manifest; rewritten atomically whenever its status changes."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["abt.run/1"] = Field(default=RUN_SCHEMA, alias="schema")
    status: RunStatus = "running"
    command: str = Field(description="The job: replay.")
    config: dict[str, Any] = Field(description="Every setting that decides the answers.")
    inputs: list[InputFile] = Field(default_factory=list)
    labels: dict[str, str] = Field(
        default_factory=dict, description="--label KEY=VALUE: tells runs of teams or agents apart."
    )
    code_version: str
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None
    counts: dict[str, Any] = Field(
        default_factory=dict,
        description="Calls, cache hits, errors by kind, credential refreshes, tokens.",
    )
    sessions: int = 0
    units: int = 0
    attempts_of_run: int = Field(default=1, description="1 + the number of resumes.")

    def save(self, path: Path) -> None:
        """Write atomically (mode 0600)."""
        self.updated_at = now()
        with private_atomic_writer(path) as handle:
            handle.write(self.model_dump_json(by_alias=True, indent=2).encode() + b"\n")

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
    """The installed package version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agent-backtest")
    except PackageNotFoundError:
        return "unknown"
