"""Coverage of a patch over units: the four statuses, target narrowing, the report and the diff."""

from __future__ import annotations

import json
from typing import Any

from agent_backtest.patch.coverage import CoverageReport, PatchCoverage, request_diff
from agent_backtest.units import Unit
from tests.patch.tau_units import patch_of, tau_units

REFUND = {
    "id": "refund-rule",
    "target": "system",
    "action": "replace",
    "find": "within 24 hours",
    "replace": "within 48 hours",
}


def labelled_units() -> list[Unit]:
    """30 τ-bench units: 10 router units of node triage, 20 action units of node booking;
    even units are test, odd val; units 20-29 do not offer cancel_reservation; units 0-14 are
    already sent temperature 0."""
    units = []
    for index, unit in enumerate(tau_units()):
        request = unit.request
        if index >= 20:
            request = request.model_copy(
                update={"tools": [t for t in request.tools or [] if t.name != "cancel_reservation"]}
            )
        if index < 15:
            request = request.model_copy(update={"params": {"temperature": 0}})
        units.append(
            unit.model_copy(
                update={
                    "node": "triage" if index < 10 else "booking",
                    "kind": "router" if index < 10 else "action",
                    "split": "test" if index % 2 == 0 else "val",
                    "request": request,
                }
            )
        )
    return units


def report_of(*ops: dict[str, Any]) -> CoverageReport:
    return PatchCoverage(patch_of(*ops)).add_all(labelled_units()).report("p.json", "abc")


def counts(report: CoverageReport, index: int = 0) -> tuple[int, int, int, str]:
    op = report.ops[index]
    return op.units_in_scope, op.units_with_target, op.units_changed, op.status


def test_ok_when_every_unit_with_the_target_changed() -> None:
    report = report_of(REFUND)
    assert counts(report) == (30, 30, 30, "ok")
    assert report.ops[0].message == "" and report.unmatched == []
    assert report.units == report.units_changed == 30
    assert report.ops[0].example_unit == tau_units()[0].unit_id


def test_partial_when_some_units_with_the_target_did_not_change() -> None:
    report = report_of(
        {"id": "t0", "target": "params", "action": "set", "name": "temperature", "value": 0}
    )
    assert counts(report) == (30, 30, 15, "partial")
    assert report.ops[0].message == (
        "changed 15 of 30 units with a request; the others: temperature already is 0 (15 units)"
    )
    assert report.unmatched == []


def test_no_match_when_units_have_the_target_but_nothing_matched() -> None:
    report = report_of({**REFUND, "find": "within 42 hours"})
    assert counts(report) == (30, 30, 0, "no_match")
    assert report.ops[0].message == (
        "changed none of the 30 units with a system message: 'within 42 hours' not found (30 units)"
    )
    assert report.unmatched == ["refund-rule"] and report.units_changed == 0


def test_no_target_names_similar_tools() -> None:
    report = report_of(
        {"id": "drop", "target": "tool", "action": "remove", "tool": "search_flight"}
    )
    assert counts(report) == (30, 0, 0, "no_target")
    assert report.ops[0].message == (
        "none of the 30 units in scope has tool 'search_flight': check the name, or narrow the "
        "op (offered tools with a similar name: search_direct_flight, search_onestop_flight)"
    )


def test_no_target_when_the_scope_keeps_no_unit() -> None:
    report = report_of({**REFUND, "nodes": ["tirage"]})
    assert counts(report) == (0, 0, 0, "no_target")
    assert report.ops[0].message.startswith("no selected unit is in the op's scope")


def test_each_narrowing_keeps_only_its_units() -> None:
    def setter(op_id: str, **scope: Any) -> dict[str, Any]:
        return {
            "id": op_id,
            "target": "params",
            "action": "set",
            "name": op_id,
            "value": 1,
            **scope,
        }

    report = report_of(
        setter("nodes", nodes=["triage"]),
        setter("kind", kind="action"),
        setter("split", split="val"),
        setter("by_tools", tools_present=["cancel_reservation", "calculate"]),
        setter("all", nodes=["booking"], split="test", tools_present=["cancel_reservation"]),
    )
    assert [counts(report, i)[:3] for i in range(5)] == [
        (10, 10, 10),
        (20, 20, 20),
        (15, 15, 15),
        (20, 20, 20),
        (5, 5, 5),
    ]


def test_narrowing_decides_which_units_change() -> None:
    units = labelled_units()
    patch = patch_of({**REFUND, "kind": "router"})
    changed = [unit.unit_id for unit in units if patch.apply(unit).changed]
    assert changed == [unit.unit_id for unit in units[:10]]
    untouched = patch.apply(units[15])
    assert untouched.request is units[15].request and untouched.ops == ()


def test_a_later_op_sees_the_earlier_ops_edit() -> None:
    report = report_of(REFUND, {**REFUND, "id": "again"})
    assert counts(report, 1) == (30, 30, 0, "no_match")  # the first op already replaced it


def test_report_json_is_sorted_and_complete() -> None:
    report = report_of(REFUND, {**REFUND, "id": "typo", "find": "24 hour refund"})
    data = json.loads(report.to_json())
    assert data["schema"] == "abt.patch_coverage/1" and data["unmatched"] == ["typo"]
    assert list(data) == sorted(data)
    assert data["ops"][0] == {
        "id": "refund-rule",
        "target": "system",
        "action": "replace",
        "units_in_scope": 30,
        "units_with_target": 30,
        "units_changed": 30,
        "status": "ok",
        "message": "",
        "example_unit": tau_units()[0].unit_id,
    }
    assert CoverageReport.model_validate(data) == report


def test_diff_shows_the_op_on_the_first_changed_request() -> None:
    coverage = PatchCoverage(
        patch_of(
            REFUND,
            {
                "id": "cold",
                "target": "params",
                "action": "set",
                "name": "temperature",
                "value": 0.2,
            },
        )
    )
    coverage.add_all(labelled_units())
    examples = coverage.examples()
    unit_id = tau_units()[0].unit_id
    text = request_diff("refund-rule", examples["refund-rule"])
    lines = text.splitlines()
    assert lines[:2] == [
        f"--- unit {unit_id} before op refund-rule",
        f"+++ unit {unit_id} after op refund-rule",
    ]
    removed = [line for line in lines if line.startswith("-") and not line.startswith("---")]
    added = [line for line in lines if line.startswith("+") and not line.startswith("+++")]
    assert len(removed) == len(added) == 1
    assert added[0] == removed[0].replace("within 24 hours", "within 48 hours").replace("-", "+", 1)
    params = request_diff("cold", examples["cold"]).splitlines()
    assert '-  "temperature": 0' in params and '+  "temperature": 0.2' in params
