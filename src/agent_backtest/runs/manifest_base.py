"""What every job's ``run.json`` says: the manifest base that replay, simulate and bench extend.

Each job's manifest adds its own settings to these fields; ``abt schema run_base`` prints the
base's JSON Schema, which every job's run.json meets. A run's kind is read from its manifest
(:func:`run_kind`), never guessed from the files beside it.

Manifests written before the base existed load too: they have no ``kind`` (it follows from
their ``schema``), a replay's ``counts`` were its candidate's alone, and a simulate run's
``counts`` were its conversation figures (now ``played``).
"""

from __future__ import annotations

import functools
import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Self

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agent_backtest.errors import InputError
from agent_backtest.input_files import read_bytes
from agent_backtest.providers.config import ModelRole
from agent_backtest.record_model import StrictModel
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.runs.provenance import Provenance

MANIFEST_FILE = "run.json"
RunKind = Literal["replay", "simulate", "bench"]
RunStatus = Literal["running", "completed", "completed_with_errors", "interrupted", "failed"]
FINAL_STATUSES: tuple[RunStatus, ...] = (
    "completed",
    "completed_with_errors",
    "interrupted",
    "failed",
)

ManifestSchema = Literal["abt.run/2", "abt.simulate_run/1", "abt.bench_run/1"]
KIND_OF_SCHEMA: dict[str, RunKind] = {
    "abt.run/2": "replay",
    "abt.simulate_run/1": "simulate",
    "abt.bench_run/1": "bench",
}
"""The kind of each manifest schema, for the manifests written before ``kind`` was."""


class InputFile(StrictModel):
    """An input of the run, identified by content."""

    path: str
    sha256: str
    bytes: int
    mtime_ns: int | None = Field(
        default=None,
        description="The file's modification time when it was hashed (nanoseconds since the "
        "epoch): a later run over the same unchanged file takes its sha256 from here.",
    )


class RunCounts(StrictModel):
    """What the run's calls cost and gave, over every start of the run."""

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


class ManifestBase(BaseModel):
    """The fields of every job's run.json; rewritten atomically whenever the run's state changes.

    Fields a job adds are ignored when a run is read as its base (:meth:`load` of this class),
    so any run directory can be read typed, whatever its kind.
    """

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    kind: RunKind = Field(description="The job that made the run: replay, simulate or bench.")
    schema_: ManifestSchema = Field(
        alias="schema", description="The job's manifest schema and version."
    )
    status: RunStatus = "running"
    code_version: str = Field(description="Which code made the run (git commit or package hash).")
    roles: dict[str, ModelRole] = Field(
        default_factory=dict, description="The run's models by role, as resolved."
    )
    inputs: list[InputFile] = Field(
        default_factory=list, description="The files the run read, each with its sha256."
    )
    counts: dict[str, RunCounts] = Field(
        default_factory=dict,
        description="Each role's calls, tokens and errors, over every start of the run.",
    )
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None
    attempts_of_run: int = Field(default=1, description="1 + the number of resumes.")
    provenance: list[Provenance] = Field(
        default_factory=list,
        description="What each start of the run ran on (abt, Python, key libraries, every "
        "role's endpoint), in order; empty for a run made before it was recorded.",
    )
    error: str | None = Field(default=None, description="Why a failed run stopped.")

    @model_validator(mode="before")
    @classmethod
    def _earlier_shapes(cls, data: Any) -> Any:
        """A manifest of the earlier shape (see the module docstring), as it reads now."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        schema = data.get("schema", data.get("schema_"))
        kind = data.get("kind") or KIND_OF_SCHEMA.get(str(schema)) or _default_kind(cls)
        if kind is not None:
            data["kind"] = kind
        counts = data.get("counts")
        if isinstance(counts, dict) and any(not isinstance(v, dict) for v in counts.values()):
            if kind == "replay":
                data["counts"] = {"candidate": counts}
            elif kind == "simulate":
                data["played"], data["counts"] = counts, {}
        return data

    def add_counts(self, role: str, counted: dict[str, Any]) -> None:
        """Add one start's calls of ``role`` (live counters as a dict) to the run's counts."""
        self.counts[role] = self.counts.get(role, RunCounts()).plus(counted)

    def save(self, path: Path, sync: bool = True) -> None:
        """Write to ``path`` atomically (mode 0600), marked as updated now; ``sync=False``
        leaves out the fsync, for a save that a later one supersedes (see
        :func:`~agent_backtest.runs.files.private_atomic_writer`)."""
        self.updated_at = now()
        with private_atomic_writer(path, sync) as handle:
            handle.write(self.model_dump_json(by_alias=True, indent=2).encode() + b"\n")

    @classmethod
    def load(cls, path: Path) -> Self:
        """Read a manifest."""
        return cls.model_validate_json(read_bytes(path, "run manifest"))


def _default_kind(model: type[ManifestBase]) -> str | None:
    """The kind a job's manifest class stands for; None for the base."""
    default = model.model_fields["kind"].default
    return default if isinstance(default, str) else None


def run_kind(directory: Path) -> RunKind:
    """The kind of the run in ``directory``, from its run.json; a folder that holds no run's
    manifest fails with what it is."""
    path = directory / MANIFEST_FILE
    if not path.is_file():
        raise InputError(directory, None, f"is not a run directory (no {MANIFEST_FILE})")
    try:
        document = orjson.loads(read_bytes(path, "run manifest"))
    except orjson.JSONDecodeError as exc:
        raise InputError(path, None, f"not JSON ({exc})") from None
    try:
        return ManifestBase.model_validate(document).kind
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or None
        raise InputError(path, where, f"not a run manifest: {error['msg']}") from None


def now() -> datetime:
    """The current UTC time."""
    return datetime.now(UTC)


def describe_input(path: Path) -> InputFile:
    """An input file with its content hash, read in chunks."""
    status = path.stat()
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return InputFile(
        path=str(path), sha256=digest.hexdigest(), bytes=status.st_size, mtime_ns=status.st_mtime_ns
    )


def describe_inputs(paths: list[Path], known: list[InputFile]) -> list[InputFile]:
    """Each input described as :func:`describe_input` does, except that a file ``known``
    describes with the same size and modification time keeps the sha256 recorded there rather
    than being read again (hashing a large input costs more than a cached rerun's calls)."""
    described = []
    for path in paths:
        status = path.stat()
        recorded = next((file for file in known if _same_file(file, path, status)), None)
        if recorded is None:
            described.append(describe_input(path))
        else:
            described.append(recorded.model_copy(update={"path": str(path)}))
    return described


def _same_file(recorded: InputFile, path: Path, status: os.stat_result) -> bool:
    """``recorded`` names ``path`` as it is now: same file, size and modification time."""
    return (
        recorded.mtime_ns == status.st_mtime_ns
        and recorded.bytes == status.st_size
        and Path(recorded.path).resolve() == path.resolve()
    )


def recorded_inputs(manifest_path: Path) -> list[InputFile]:
    """The inputs a run.json records, or none when there is no readable one (a broken or
    foreign manifest only means the inputs are hashed again)."""
    try:
        document = orjson.loads(read_bytes(manifest_path, "run manifest"))
        return [InputFile.model_validate(entry) for entry in document["inputs"]]
    except (InputError, orjson.JSONDecodeError, ValidationError, KeyError, TypeError):
        return []


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


@functools.cache
def _git_commit(package: Path) -> str | None:
    """The checkout's commit, when ``package`` is inside a git work tree; asked of git once
    per process (a replay's run.json and its provenance both record it, before the first call),
    as the code that runs is the code this process loaded."""
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
