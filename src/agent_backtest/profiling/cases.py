"""The case manifest and run annotations: what was run, on which code, and how it went.

A **case manifest** names the cases (tasks) an agent is run on. A **run annotation** says, for
the sessions of one run, which case and variant they ran, on which base revision (an exact
40-hex commit), with which case (its fingerprint: ``sha256:`` of the case's canonical JSON), and
optionally the repair turns by reason, the task's own timing and correctness verdicts.

Both are validated strictly: an unknown field, a wrong type, a total that does not add up or a
revision that is not 40 hex characters is an error naming the file and the field (a JSON path).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from agent_backtest.errors import InputError
from agent_backtest.input_files import check_data, parse_json, read_bytes
from agent_backtest.profiling.validation import first_error
from agent_backtest.trace import sha256_of

MANIFEST_SCHEMA = "abt.cases/1"
ANNOTATION_SCHEMA = "abt.run-annotation/1"
NonEmpty = Annotated[str, StringConstraints(min_length=1, strip_whitespace=False, pattern=r"\S")]
Count = Annotated[int, Field(ge=0)]
ReasonName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]


def _matching(pattern: str, what: str) -> AfterValidator:
    """Refuse a string that ``pattern`` does not match whole, saying ``what`` it must be (the
    message a schema pattern would give names the regex, not the fix)."""
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            raise ValueError(f"must be {what}, got {value!r}")
        return value

    return AfterValidator(check)


Revision = Annotated[str, _matching(r"[0-9a-f]{40}", "an exact 40-hex Git commit (lowercase)")]
Fingerprint = Annotated[
    str, _matching(r"sha256:[0-9a-f]{64}", "'sha256:' and 64 lowercase hex digits")
]


class Strict(BaseModel):
    """Base of both formats: unknown fields and loose types are errors."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class ValidationRule(Strict):
    """Whether a run of the case must pass a validation step (tests, checks)."""

    required: bool


class Case(Strict):
    """One named case of the manifest."""

    id: NonEmpty
    title: NonEmpty
    prompt: NonEmpty
    target: NonEmpty | None = None
    tags: list[NonEmpty] | None = Field(default=None, min_length=1, max_length=8)
    correctness: dict[str, Any] | None = Field(default=None, min_length=1)
    validation: ValidationRule | None = None

    @field_validator("tags")
    @classmethod
    def _unique_tags(cls, tags: list[str] | None) -> list[str] | None:
        """Refuse a tag listed twice."""
        if tags is not None and len(set(tags)) != len(tags):
            raise ValueError("tags must be unique")
        return tags


class CaseManifest(Strict):
    """The cases a set of runs is about."""

    schema_: Literal["abt.cases/1"] = Field(alias="schema")
    cases: list[Case] = Field(min_length=1)

    @field_validator("cases")
    @classmethod
    def _unique_ids(cls, cases: list[Case]) -> list[Case]:
        """Refuse a case id used twice, naming both places."""
        seen: dict[str, int] = {}
        for index, case in enumerate(cases):
            if case.id in seen:
                raise ValueError(
                    f"case id {case.id!r} appears twice (cases[{seen[case.id]}] and cases[{index}])"
                )
            seen[case.id] = index
        return cases


class RepairTurns(Strict):
    """Turns spent repairing the agent's own mistakes, by reason; the reasons add up to total."""

    total: Count
    by_reason: dict[ReasonName, Count]

    @field_validator("by_reason")
    @classmethod
    def _adds_up(cls, by_reason: dict[str, int], info: ValidationInfo) -> dict[str, int]:
        """Refuse counts by reason that do not add up to the total."""
        total = info.data.get("total")
        if total is not None and sum(by_reason.values()) != total:
            raise ValueError(
                f"the counts by reason add up to {sum(by_reason.values())}, but total is {total}"
            )
        return by_reason


class TaskTiming(Strict):
    """When the task started and ended, in milliseconds since the epoch."""

    started_at_ms: Count
    ended_at_ms: Count

    @field_validator("ended_at_ms")
    @classmethod
    def _after_start(cls, ended: int, info: ValidationInfo) -> int:
        """Refuse a task that ends before it starts."""
        started = info.data.get("started_at_ms")
        if started is not None and ended < started:
            raise ValueError(f"ends ({ended}) before it starts ({started})")
        return ended


class Correctness(Strict):
    """Verdicts on the run's result."""

    task_verdict: Literal["pass", "fail", "unavailable"]
    validation_verdict: Literal["pass", "fail", "not_required", "unavailable"]


class RunAnnotation(Strict):
    """What one run of a case was: its sessions, case, variant, revision and outcome."""

    schema_: Literal["abt.run-annotation/1"] = Field(alias="schema")
    case_id: NonEmpty
    variant: NonEmpty
    session_ids: list[NonEmpty] = Field(min_length=1)
    base_revision: Revision
    case_fingerprint: Fingerprint
    repair_turns: RepairTurns | None = None
    task_timing: TaskTiming | None = None
    correctness: Correctness | None = None

    @field_validator("session_ids")
    @classmethod
    def _unique_sessions(cls, ids: list[str]) -> list[str]:
        """Refuse a session listed twice."""
        if len(set(ids)) != len(ids):
            raise ValueError("session ids must be unique")
        return ids


class Cases:
    """A validated manifest: the cases by id and the fingerprint of each."""

    def __init__(self, manifest: CaseManifest, raw_cases: list[Any]) -> None:
        self.by_id = {case.id: case for case in manifest.cases}
        self.fingerprints = {
            case.id: sha256_of(raw) for case, raw in zip(manifest.cases, raw_cases, strict=True)
        }


def case_fingerprint(case: dict[str, Any]) -> str:
    """``sha256:`` of a case's canonical JSON (sorted keys, compact), as annotations state it."""
    return sha256_of(case)


def load_manifest(path: Path) -> Cases:
    """A case manifest file, validated strictly."""
    data = _load(path)
    try:
        manifest = CaseManifest.model_validate(data)
    except ValidationError as exc:
        location, message = first_error(exc)
        raise InputError(path, location, message) from None
    return Cases(manifest, data["cases"])


def load_annotations(path: Path, cases: Cases) -> list[RunAnnotation]:
    """The run annotations of a file (one object, a list, or JSON Lines), checked against cases."""
    found = []
    for prefix, value in _documents(path):
        try:
            annotation = RunAnnotation.model_validate(value)
        except ValidationError as exc:
            location, message = first_error(exc)
            raise InputError(path, prefix + location.removeprefix("$"), message) from None
        _check_against_case(annotation, cases, path, prefix)
        found.append(annotation)
    return found


def _check_against_case(annotation: RunAnnotation, cases: Cases, path: Path, prefix: str) -> None:
    """Check an annotation against its case: present, same fingerprint, verdicts allowed."""
    case = cases.by_id.get(annotation.case_id)
    if case is None:
        raise InputError(
            path, f"{prefix}.case_id", f"case {annotation.case_id!r} is not in the case manifest"
        )
    expected = cases.fingerprints[case.id]
    if annotation.case_fingerprint != expected:
        raise InputError(
            path,
            f"{prefix}.case_fingerprint",
            f"does not match case {case.id!r} of the manifest ({expected}): "
            "the run used another version of the case",
        )
    verdict = annotation.correctness.validation_verdict if annotation.correctness else None
    if verdict == "not_required" and case.validation is not None and case.validation.required:
        raise InputError(
            path,
            f"{prefix}.correctness.validation_verdict",
            f"is not_required, but case {case.id!r} requires validation",
        )


def _load(path: Path) -> Any:
    """A JSON file's value, or an error naming the file and line."""
    return parse_json(read_bytes(path, "case manifest"), path)


def _documents(path: Path) -> Iterator[tuple[str, Any]]:
    """(JSON path prefix, value) of each annotation: an object, a list of them, or JSON Lines."""
    text = read_bytes(path, "annotations file")
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        yield from _lines(path, text)
        return
    check_data(data, path)
    if isinstance(data, list):
        yield from ((f"$[{index}]", item) for index, item in enumerate(data))
    else:
        yield "$", data


def _lines(path: Path, text: bytes) -> Iterator[tuple[str, Any]]:
    """(location, value) of each non-blank line of a JSON Lines file."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        yield f"line {number}: $", parse_json(line, path, f"line {number}")


def sessions_by_id(annotations: list[tuple[Path, RunAnnotation]]) -> dict[str, RunAnnotation]:
    """Each annotated session's annotation; a session in two annotations is an error."""
    found: dict[str, tuple[Path, RunAnnotation]] = {}
    for path, annotation in annotations:
        for session_id in annotation.session_ids:
            if session_id in found:
                raise InputError(
                    path,
                    "$.session_ids",
                    f"session {session_id!r} is also annotated in "
                    f"{found[session_id][0]} (a session belongs to one run)",
                )
            found[session_id] = (path, annotation)
    return {session_id: annotation for session_id, (_, annotation) in found.items()}
