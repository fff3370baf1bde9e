"""``run.json`` of a simulate run: what was played through what, how it is isolated, its
status. Rewritten atomically whenever the status changes."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_backtest.providers.config import ModelRole
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.runs.manifest import InputFile, code_version, now

SIMULATE_RUN_SCHEMA = "abt.simulate_run/1"
SimulateStatus = Literal["running", "completed", "completed_with_errors", "interrupted", "failed"]


class TargetRecord(BaseModel):
    """The target file the run plays through, with its hash (a resume refuses an edited one)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    type: str
    file: InputFile


class SelectionRecord(BaseModel):
    """The selection asked for."""

    model_config = ConfigDict(extra="forbid")

    families: list[str] = Field(default_factory=list)
    per_family: int | None = None
    offset: int = 0
    limit: int | None = None
    read_only_only: bool = False
    from_run: str | None = Field(default=None, description="The earlier run the flows came from.")
    verdicts: list[str] = Field(default_factory=list, description="Its verdicts kept (--verdict).")
    owners: list[str] = Field(default_factory=list, description="Its owners kept (--owner).")
    exclude_judged: list[str] = Field(
        default_factory=list, description="The earlier runs whose judged seeds were left out."
    )
    left_out: dict[str, int] = Field(
        default_factory=dict,
        description="Flows left out and why: not_matching (--verdict, --owner), judged_pass, "
        "judged_fail (--exclude-judged).",
    )


class IsolationRecord(BaseModel):
    """How flows that may change the agent's data are isolated."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["none", "fixture_db", "commands"] = "none"
    fixture_db: str | None = None
    snapshot_cmd: str | None = Field(default=None, description="Redacted.")
    restore_cmd: str | None = Field(default=None, description="Redacted.")
    snapshot_taken: bool = False


class SimulateCounts(BaseModel):
    """How many flows, conversations and errors."""

    model_config = ConfigDict(extra="forbid")

    flows: int = 0
    isolated: int = Field(default=0, description="Selected flows that may change state.")
    skipped_may_change_state: int = Field(default=0, description="Left out by --read-only-only.")
    conversations: int = 0
    transport_errors: int = Field(
        default=0, description="Conversations that could not be completed (never judged)."
    )
    teardown_errors: int = 0


class SimulateManifest(BaseModel):
    """The manifest of a simulate run."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["abt.simulate_run/1"] = Field(default=SIMULATE_RUN_SCHEMA, alias="schema")
    status: SimulateStatus = "running"
    command: Literal["simulate run"] = "simulate run"
    flows: InputFile = Field(description="The flows file as given (flows.jsonl: as selected).")
    target: TargetRecord
    agent_config: str | None = None
    config_file: str | None = None
    roles: dict[str, ModelRole] = Field(default_factory=dict)
    ledger: str | None = Field(
        default=None, description="The team's ledger file the run's findings are appended to."
    )
    selection: SelectionRecord = Field(default_factory=SelectionRecord)
    isolation: IsolationRecord = Field(default_factory=IsolationRecord)
    concurrency: int = 4
    result_chars: int
    skip_judge: bool = True
    code_version: str
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None
    attempts_of_run: int = Field(default=1, description="1 + the number of resumes.")
    counts: SimulateCounts = Field(default_factory=SimulateCounts)
    error_examples: dict[str, str] = Field(
        default_factory=dict, description="One redacted transport error per kind."
    )
    error: str | None = Field(default=None, description="Why a failed run stopped.")

    @classmethod
    def new(cls, **fields: Any) -> SimulateManifest:
        """A fresh manifest, made now by this code."""
        moment = now()
        return cls(code_version=code_version(), created_at=moment, updated_at=moment, **fields)

    def save(self, path: Path) -> None:
        """Write atomically (mode 0600)."""
        self.updated_at = now()
        with private_atomic_writer(path) as handle:
            handle.write(self.model_dump_json(by_alias=True, indent=2).encode() + b"\n")

    @classmethod
    def load(cls, path: Path) -> SimulateManifest:
        """Read a manifest."""
        return cls.model_validate_json(path.read_bytes())
