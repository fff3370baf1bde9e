"""``run.json`` of a simulate run: what was played through what, how it is isolated, its
status. Rewritten atomically whenever the status changes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from agent_backtest.record_model import StrictModel, schema_tag
from agent_backtest.runs.manifest_base import (
    InputFile,
    ManifestBase,
    code_version,
    now,
)

SIMULATE_RUN_SCHEMA = "abt.simulate_run/1"


class TargetRecord(StrictModel):
    """The target file the run plays through, with its hash (a resume refuses an edited one)."""

    name: str
    type: str
    file: InputFile


class SelectionRecord(StrictModel):
    """The selection asked for."""

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


class IsolationRecord(StrictModel):
    """How flows that may change the agent's data are isolated."""

    kind: Literal["none", "fixture_db", "commands"] = "none"
    fixture_db: str | None = None
    snapshot_cmd: str | None = Field(default=None, description="Redacted.")
    restore_cmd: str | None = Field(default=None, description="Redacted.")
    snapshot_taken: bool = False


class PlayedCounts(StrictModel):
    """How many flows, conversations and errors (the model calls are in ``counts``)."""

    flows: int = 0
    isolated: int = Field(default=0, description="Selected flows that may change state.")
    skipped_may_change_state: int = Field(default=0, description="Left out by --read-only-only.")
    conversations: int = 0
    transport_errors: int = Field(
        default=0, description="Conversations that could not be completed (never judged)."
    )
    teardown_errors: int = 0
    unisolated_mutations: int = Field(
        default=0,
        description="Conversations that called a tool not declared read-only, unisolated.",
    )


class SimulateManifest(ManifestBase):
    """The manifest of a simulate run; ``counts`` holds the calls of the user, judge, teacher
    and agent roles that the run made itself (an HTTP target's own calls are its own)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["simulate"] = "simulate"
    schema_: Literal["abt.simulate_run/1"] = schema_tag(SIMULATE_RUN_SCHEMA)
    command: Literal["simulate run"] = "simulate run"
    flows: InputFile = Field(description="The flows file as given (flows.jsonl: as selected).")
    target: TargetRecord
    agent_config: str | None = None
    config_file: str | None = None
    ledger: str | None = Field(
        default=None, description="The team's ledger file the run's findings are appended to."
    )
    selection: SelectionRecord = Field(default_factory=SelectionRecord)
    isolation: IsolationRecord = Field(default_factory=IsolationRecord)
    concurrency: int = 4
    result_chars: int
    repeats: int = Field(default=1, description="Conversations played per flow (--k).")
    skip_judge: bool = Field(
        default=True,
        description="The judge stage was skipped at the run's latest start (abt simulate judge "
        "RUN judges it later).",
    )
    played: PlayedCounts = Field(default_factory=PlayedCounts)
    error_examples: dict[str, str] = Field(
        default_factory=dict, description="One redacted transport error per kind."
    )
    warnings: list[str] = Field(
        default_factory=list, description="What the run found doubtful in its own set-up."
    )

    @classmethod
    def new(cls, **fields: Any) -> SimulateManifest:
        """A fresh manifest, made now by this code; its inputs are the flows and target files."""
        moment = now()
        inputs = [fields["flows"], fields["target"].file]
        return cls(
            code_version=code_version(),
            created_at=moment,
            updated_at=moment,
            inputs=inputs,
            **fields,
        )
