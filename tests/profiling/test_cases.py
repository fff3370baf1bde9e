"""Strict validation of the case manifest and run annotations: each rule names its field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.errors import InputError
from agent_backtest.profiling import case_fingerprint, load_annotations, load_manifest
from agent_backtest.profiling.cases import sessions_by_id

CASE = {
    "id": "rebook",
    "title": "Rebook a cancelled flight",
    "prompt": "My flight was cancelled.",
    "target": "airline",
    "tags": ["booking"],
    "correctness": {"expect": "new reservation"},
    "validation": {"required": True},
}
MANIFEST = {
    "schema": "abt.cases/1",
    "cases": [CASE, {"id": "refund", "title": "Refund", "prompt": "Refund me."}],
}
REVISION = "0123456789abcdef0123456789abcdef01234567"
ANNOTATION = {
    "schema": "abt.run-annotation/1",
    "case_id": "rebook",
    "variant": "with-search",
    "session_ids": ["tau-task0-trial0"],
    "base_revision": REVISION,
    "case_fingerprint": case_fingerprint(CASE),
    "repair_turns": {"total": 3, "by_reason": {"invalid_arguments": 2, "wrong_tool": 1}},
    "task_timing": {"started_at_ms": 1000, "ended_at_ms": 4000},
    "correctness": {"task_verdict": "pass", "validation_verdict": "fail"},
}


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value))
    return path


def manifest_error(tmp_path: Path, manifest: Any) -> str:
    with pytest.raises(InputError) as caught:
        load_manifest(write(tmp_path / "cases.json", manifest))
    return str(caught.value)


def annotation_error(tmp_path: Path, annotation: Any) -> str:
    cases = load_manifest(write(tmp_path / "cases.json", MANIFEST))
    with pytest.raises(InputError) as caught:
        load_annotations(write(tmp_path / "run.json", annotation), cases)
    return str(caught.value)


def changed(value: dict[str, Any], path: str, new: Any) -> dict[str, Any]:
    """A deep copy with the dotted ``path`` set to ``new`` (or removed when new is ...)."""
    result = copy.deepcopy(value)
    *parents, last = path.split(".")
    target = result
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if new is ...:
        del target[last]
    else:
        target[last] = new
    return result


def test_valid_files_load(tmp_path: Path) -> None:
    cases = load_manifest(write(tmp_path / "cases.json", MANIFEST))
    assert sorted(cases.by_id) == ["rebook", "refund"]
    [annotation] = load_annotations(write(tmp_path / "run.json", ANNOTATION), cases)
    assert annotation.repair_turns is not None and annotation.repair_turns.total == 3


def test_fingerprint_is_sha256_of_canonical_json() -> None:
    import hashlib

    canonical = json.dumps(CASE, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert case_fingerprint(CASE) == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("schema", "abt.cases/2", "$.schema: Input should be 'abt.cases/1'"),
        ("cases", [], "$.cases: List should have at least 1 item"),
        ("cases.0.owner", "me", "$.cases[0].owner: unknown field"),
        ("cases.0.id", ..., "$.cases[0].id: Field required"),
        ("cases.0.title", 7, "$.cases[0].title: Input should be a valid string"),
        ("cases.0.prompt", "   ", "$.cases[0].prompt: String should match pattern"),
        ("cases.0.tags", ["a", "a"], "$.cases[0].tags: tags must be unique"),
        ("cases.0.tags", [str(i) for i in range(9)], "$.cases[0].tags: List should have at most 8"),
        (
            "cases.0.validation",
            {"required": "yes"},
            "$.cases[0].validation.required: Input should be a valid boolean",
        ),
        ("cases.0.correctness", {}, "$.cases[0].correctness: Dictionary should have at least 1"),
        ("cases.1.id", "rebook", "$.cases: case id 'rebook' appears twice (cases[0] and cases[1])"),
    ],
)
def test_manifest_rules(tmp_path: Path, path: str, value: Any, expected: str) -> None:
    assert expected in manifest_error(tmp_path, changed(MANIFEST, path, value))


def test_manifest_that_is_not_json_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "cases.json").write_text('{\n  "schema": "abt.cases/1",\n  "cases": [\n')
    with pytest.raises(InputError, match=r"cases.json: line \d+, column \d+: not valid JSON"):
        load_manifest(tmp_path / "cases.json")


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("comment", "x", "$.comment: unknown field"),
        ("schema", "abt.run-annotation/0", "$.schema: Input should be 'abt.run-annotation/1'"),
        ("variant", 2, "$.variant: Input should be a valid string"),
        ("case_id", "", "$.case_id: String should have at least 1 character"),
        ("session_ids", [], "$.session_ids: List should have at least 1 item"),
        ("session_ids", ["a", "a"], "$.session_ids: session ids must be unique"),
        ("base_revision", REVISION[:39], "$.base_revision: must be an exact 40-hex Git commit"),
        ("base_revision", REVISION.upper(), "$.base_revision: must be an exact 40-hex Git commit"),
        ("base_revision", "main", "$.base_revision: must be an exact 40-hex Git commit"),
        ("base_revision", "g" * 40, "$.base_revision: must be an exact 40-hex Git commit"),
        ("case_fingerprint", "0" * 64, "$.case_fingerprint: must be 'sha256:' and 64"),
        (
            "case_fingerprint",
            "sha256:" + "0" * 64,
            "$.case_fingerprint: does not match case 'rebook' of the manifest",
        ),
        ("case_id", "nope", "$.case_id: case 'nope' is not in the case manifest"),
        (
            "repair_turns.total",
            4,
            "$.repair_turns.by_reason: the counts by reason add up to 3, but total is 4",
        ),
        (
            "repair_turns.total",
            -1,
            "$.repair_turns.total: Input should be greater than or equal to 0",
        ),
        ("repair_turns.total", True, "$.repair_turns.total: Input should be a valid integer"),
        ("repair_turns.by_reason", {"Bad Reason": 3}, "$.repair_turns.by_reason.Bad Reason"),
        (
            "repair_turns.by_reason",
            {"x": 3.0},
            "$.repair_turns.by_reason.x: Input should be a valid",
        ),
        ("repair_turns.extra", 1, "$.repair_turns.extra: unknown field"),
        ("task_timing.ended_at_ms", 999, "$.task_timing.ended_at_ms: ends (999) before it starts"),
        (
            "task_timing.started_at_ms",
            "1000",
            "$.task_timing.started_at_ms: Input should be a valid",
        ),
        ("correctness.task_verdict", "ok", "$.correctness.task_verdict: Input should be 'pass'"),
        (
            "correctness.validation_verdict",
            "not_required",
            "$.correctness.validation_verdict: is not_required, but case 'rebook' requires "
            "validation",
        ),
    ],
)
def test_annotation_rules(tmp_path: Path, path: str, value: Any, expected: str) -> None:
    assert expected in annotation_error(tmp_path, changed(ANNOTATION, path, value))


def test_annotation_lists_and_lines_name_their_item(tmp_path: Path) -> None:
    bad = changed(ANNOTATION, "variant", None)
    assert "run.json: $[1].variant: Input should be a valid string" in annotation_error(
        tmp_path, [ANNOTATION, bad]
    )
    cases = load_manifest(write(tmp_path / "cases.json", MANIFEST))
    lines = tmp_path / "runs.jsonl"
    lines.write_text(json.dumps(ANNOTATION) + "\n\n" + json.dumps(bad) + "\n")
    with pytest.raises(InputError, match=r"runs.jsonl: line 3: \$.variant"):
        load_annotations(lines, cases)


def test_a_session_belongs_to_one_run(tmp_path: Path) -> None:
    cases = load_manifest(write(tmp_path / "cases.json", MANIFEST))
    first = load_annotations(write(tmp_path / "a.json", ANNOTATION), cases)
    second = load_annotations(write(tmp_path / "b.json", ANNOTATION), cases)
    with pytest.raises(InputError, match="session 'tau-task0-trial0' is also annotated in"):
        sessions_by_id([(tmp_path / "a.json", first[0]), (tmp_path / "b.json", second[0])])
