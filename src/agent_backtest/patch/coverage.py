"""``patch_coverage.json``: for each op of a patch, how many units have its target and how many
it changed, with a status, so a typo in a patch stops a run instead of producing a clean-looking,
meaningless one.

Statuses: ``ok`` (changed every unit in scope that has the target), ``partial`` (changed some of
them), ``no_match`` (units have the target, but the op changed none of them: text not found,
value already set) and ``no_target`` (no unit in scope has what the op edits).
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from agent_backtest.patch.ops import OpBase, OpOutcome, Patch
from agent_backtest.record_model import StrictModel, TaggedRecord, schema_tag
from agent_backtest.runs.documents import document_bytes
from agent_backtest.trace import LLMRequest
from agent_backtest.units import Unit

COVERAGE_SCHEMA = "abt.patch_coverage/1"
CoverageStatus = Literal["ok", "partial", "no_match", "no_target"]
UNMATCHED: frozenset[str] = frozenset({"no_match", "no_target"})


class OpCoverage(StrictModel):
    """What one op did over the selected units."""

    id: str = Field(description="The op's id in the patch.")
    target: str = Field(description="What the op edits, e.g. 'system' or 'tool get_user'.")
    action: str = Field(description="What the op does to it (replace, set, remove, …).")
    units_in_scope: int = Field(description="Units its nodes/kind/tools_present/split keep.")
    units_with_target: int = Field(description="Units in scope whose request has the target.")
    units_changed: int = Field(description="Units whose request the op changed.")
    status: CoverageStatus = Field(description="ok, partial, no_match or no_target.")
    message: str = Field(description="Why the status is not ok, and what to do about it.")
    example_unit: str | None = Field(default=None, description="The first unit it changed.")


class CoverageReport(TaggedRecord):
    """The coverage of a whole patch over the selected units."""

    schema_: Literal["abt.patch_coverage/1"] = schema_tag(COVERAGE_SCHEMA)
    patch_file: str = Field(description="The patch file's name as given.")
    patch_sha256: str = Field(description="sha256 of the patch file's bytes.")
    units: int = Field(description="Units the patch was applied to.")
    units_changed: int = Field(description="Units whose request at least one op changed.")
    ops: list[OpCoverage] = Field(description="Each op's coverage, in the patch's order.")
    unmatched: list[str] = Field(description="Ops that matched nothing (no_match, no_target).")

    def to_json(self) -> bytes:
        """The report as written to patch_coverage.json (sorted keys, indented)."""
        return document_bytes(self)


@dataclass
class Example:
    """The first unit an op changed: its request just before and just after the op."""

    unit_id: str
    before: LLMRequest
    after: LLMRequest


@dataclass
class _Tally:
    """Counts of one op's outcomes over the units."""

    in_scope: int = 0
    with_target: int = 0
    changed: int = 0
    notes: Counter[str] = field(default_factory=Counter)
    example: Example | None = None

    def add(self, unit_id: str, outcome: OpOutcome) -> None:
        """Count one unit's outcome; keep the first change as the example."""
        if outcome.state == "out_of_scope":
            return
        self.in_scope += 1
        if outcome.state == "no_target":
            return
        self.with_target += 1
        if outcome.state == "unchanged":
            self.notes[outcome.note or "unchanged"] += 1
            return
        self.changed += 1
        if self.example is None and outcome.before is not None and outcome.after is not None:
            self.example = Example(unit_id, outcome.before, outcome.after)


class PatchCoverage:
    """Applies a patch to every unit and counts what each op did."""

    def __init__(self, patch: Patch) -> None:
        """Nothing counted yet."""
        self.patch = patch
        self.units = 0
        self.units_changed = 0
        self._tallies = {op.id: _Tally() for op in patch.ops}
        self._tool_names: set[str] = set()  # to suggest a name for a misspelt tool

    def add_all(self, units: Iterable[Unit]) -> PatchCoverage:
        """Count every unit; returns self."""
        for unit in units:
            self.add(unit)
        return self

    def add(self, unit: Unit) -> None:
        """Apply the patch to one unit and count each op's outcome."""
        patched = self.patch.apply(unit)
        self._tool_names.update(tool.name for tool in unit.request.tools or [])
        self.units += 1
        self.units_changed += patched.changed
        for outcome in patched.outcomes:
            self._tallies[outcome.op_id].add(unit.unit_id, outcome)

    def examples(self) -> dict[str, Example]:
        """The first changed request of each op that changed one."""
        return {op_id: t.example for op_id, t in self._tallies.items() if t.example}

    def report(self, patch_file: str, patch_sha256: str) -> CoverageReport:
        """The coverage report."""
        ops = [_op_coverage(op, self._tallies[op.id], self._tool_names) for op in self.patch.ops]
        return CoverageReport(
            patch_file=patch_file,
            patch_sha256=patch_sha256,
            units=self.units,
            units_changed=self.units_changed,
            ops=ops,
            unmatched=[op.id for op in ops if op.status in UNMATCHED],
        )


def _op_coverage(op: OpBase, tally: _Tally, tool_names: set[str]) -> OpCoverage:
    """One op's line of the report; a tool name no unit offers gets the nearest offered names."""
    status, message = _status(op, tally)
    tool = getattr(op, "tool", None)
    if status == "no_target" and isinstance(tool, str) and tool not in tool_names:
        close = difflib.get_close_matches(tool, sorted(tool_names), n=3)
        if close:
            message += f" (offered tools with a similar name: {', '.join(close)})"
    return OpCoverage(
        id=op.id,
        target=op.target_label(),
        action=str(getattr(op, "action", "")),
        units_in_scope=tally.in_scope,
        units_with_target=tally.with_target,
        units_changed=tally.changed,
        status=status,
        message=message,
        example_unit=tally.example.unit_id if tally.example else None,
    )


def _status(op: OpBase, tally: _Tally) -> tuple[CoverageStatus, str]:
    """The op's status and the message that says why and what to do."""
    notes = "; ".join(f"{note} ({count} units)" for note, count in tally.notes.most_common(3))
    if tally.in_scope == 0:
        return (
            "no_target",
            "no selected unit is in the op's scope: check nodes, kind, "
            "tools_present and split against the units (abt units, abt show)",
        )
    if tally.with_target == 0:
        return (
            "no_target",
            f"none of the {tally.in_scope} units in scope has "
            f"{op.target_phrase()}: check the name, or narrow the op",
        )
    if tally.changed == 0:
        return (
            "no_match",
            f"changed none of the {tally.with_target} units with {op.target_phrase()}: {notes}",
        )
    if tally.changed < tally.with_target:
        return (
            "partial",
            f"changed {tally.changed} of {tally.with_target} units with "
            f"{op.target_phrase()}; the others: {notes}",
        )
    return "ok", ""


def request_lines(request: LLMRequest) -> list[str]:
    """A request as readable lines: each message's text, then tools, tool_choice and params."""
    lines = [f"model: {request.model}"]
    for index, message in enumerate(request.messages):
        lines.append(f"## message {index} ({message.role})")
        lines += message.text().splitlines() or [""]
        for call in message.tool_calls or []:
            lines.append(f"tool call {call.name} {json.dumps(call.arguments, sort_keys=True)}")
    if request.tools is not None:
        lines.append("## tools")
        for tool in request.tools:
            data = tool.model_dump(mode="json", exclude_none=True)
            lines += json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    if request.tool_choice is not None:
        lines.append(f"## tool_choice: {json.dumps(request.tool_choice, sort_keys=True)}")
    if request.params:
        lines.append("## params")
        lines += json.dumps(request.params, indent=2, sort_keys=True).splitlines()
    return lines


def request_diff(op_id: str, example: Example, context: int = 2) -> str:
    """A unified diff of the example request before and after the op."""
    return "\n".join(
        difflib.unified_diff(
            request_lines(example.before),
            request_lines(example.after),
            fromfile=f"unit {example.unit_id} before op {op_id}",
            tofile=f"unit {example.unit_id} after op {op_id}",
            n=context,
            lineterm="",
        )
    )
