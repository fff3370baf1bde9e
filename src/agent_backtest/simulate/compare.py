"""Two simulate runs over the same flows (a baseline A and a candidate B): what changed.

Flows pair up by id. A flow whose verdict differs is a **flip**, listed by direction (pass → fail,
fail → pass, and to or from uncertain). The difference in pass rate B − A is taken over the
flows decided (pass or fail) in both runs, with the paired, seed-clustered test of
:func:`agent_backtest.statistics.paired_difference` (McNemar's with seeds as the units at no
change). Flows in one run only, and flows not judged on a side, are counted apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import orjson
from pydantic import Field

from agent_backtest.errors import InputError
from agent_backtest.record_model import StrictModel, TaggedRecord, schema_tag
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.simulate.models import Flow, Verdict
from agent_backtest.simulate.summary import DECIDED, SeedMean, cluster_of
from agent_backtest.statistics import clustered_mean, paired_difference

COMPARISON_SCHEMA = "abt.simulate_comparison/1"
COMPARISON_FILE = "compare.json"


class Flip(StrictModel):
    """One flow whose verdict changed from A to B."""

    flow_id: str
    family: str
    a: str = Field(description="A's verdict: pass, fail or uncertain.")
    b: str
    b_owner: str | None = Field(default=None, description="Who owns B's failure.")
    b_category: str | None = None


class PairedCounts(StrictModel):
    """How many flows were compared, and why the others were not."""

    in_both: int = Field(description="Flows in both runs.")
    decided_in_both: int = Field(description="Pass or fail in both: the difference's pairs.")
    only_in_a: int
    only_in_b: int
    not_judged: int = Field(description="In both runs, without a verdict on one side or both.")
    changed_flows: int = Field(description="In both runs, but not the same flow (turns, user…).")


class SimulateComparison(TaggedRecord):
    """``compare.json`` of two simulate runs."""

    schema_: Literal["abt.simulate_comparison/1"] = schema_tag(COMPARISON_SCHEMA)
    a: str = Field(description="The baseline run's directory.")
    b: str
    pass_rate_a: SeedMean = Field(description="A's pass rate over the pairs decided in both.")
    pass_rate_b: SeedMean
    difference: SeedMean = Field(description="B − A over those pairs, its interval paired.")
    p_value: float | None = Field(description="Of no change (None with fewer than two seeds).")
    counts: PairedCounts
    flips: dict[str, int] = Field(description="'pass → fail' and so on → flows.")
    flipped: list[Flip] = Field(description="Every flip, in A's order of flows.")
    warnings: list[str] = Field(default_factory=list)


def compare_verdicts(
    a: tuple[Path, Sequence[Flow], Mapping[str, Verdict]],
    b: tuple[Path, Sequence[Flow], Mapping[str, Verdict]],
) -> SimulateComparison:
    """Compare run ``a`` (baseline) with run ``b``: each is (path, flows, verdict per flow)."""
    (path_a, flows_a, verdicts_a), (path_b, flows_b, verdicts_b) = a, b
    in_b = {flow.id: flow for flow in flows_b}
    both = [flow for flow in flows_a if flow.id in in_b]
    if not both:
        raise InputError(path_b, None, f"has no flow in common with {path_a}: nothing to compare")
    pairs: list[tuple[float, float, str]] = []
    flipped: list[Flip] = []
    not_judged = 0
    for flow in both:
        va, vb = verdicts_a.get(flow.id), verdicts_b.get(flow.id)
        if va is None or vb is None:
            not_judged += 1
            continue
        if va.verdict in DECIDED and vb.verdict in DECIDED:
            pairs.append((_passed(va), _passed(vb), cluster_of(flow)))
        if va.verdict != vb.verdict:
            flipped.append(
                Flip(
                    flow_id=flow.id,
                    family=flow.family,
                    a=va.verdict,
                    b=vb.verdict,
                    b_owner=vb.owner,
                    b_category=vb.failure_category,
                )
            )
    test = paired_difference(pairs)
    clusters = [c for _, _, c in pairs]
    ids_a = {flow.id for flow in flows_a}
    counts = PairedCounts(
        in_both=len(both),
        decided_in_both=len(pairs),
        only_in_a=len(flows_a) - len(both),
        only_in_b=len(in_b.keys() - ids_a),
        not_judged=not_judged,
        changed_flows=sum(_content(flow) != _content(in_b[flow.id]) for flow in both),
    )
    return SimulateComparison(
        a=str(path_a),
        b=str(path_b),
        pass_rate_a=SeedMean.of(clustered_mean([x for x, _, _ in pairs], clusters)),
        pass_rate_b=SeedMean.of(clustered_mean([y for _, y, _ in pairs], clusters)),
        difference=SeedMean.of(test.estimate),
        p_value=test.p_value,
        counts=counts,
        flips=dict(sorted(Counter(f"{f.a} → {f.b}" for f in flipped).items())),
        flipped=flipped,
        warnings=_warnings(counts),
    )


def _passed(verdict: Verdict) -> float:
    return 1.0 if verdict.verdict == "pass" else 0.0


def _content(flow: Flow) -> dict:
    """What a flow asks, without its id."""
    return flow.model_dump(exclude={"id"})


def _warnings(counts: PairedCounts) -> list[str]:
    """Everything that qualifies the comparison."""
    found = []
    if counts.only_in_a or counts.only_in_b:
        found.append(
            f"{counts.only_in_a} flows only in A and {counts.only_in_b} only in B: not compared"
        )
    if counts.changed_flows:
        found.append(
            f"{counts.changed_flows} flows of the same id differ between the runs (turns, user "
            "or expectations): their verdicts answer different questions"
        )
    if counts.not_judged:
        found.append(
            f"{counts.not_judged} flows have no verdict in one run or both (abt simulate judge "
            "RUN --resume): not compared"
        )
    return found


@dataclass
class SimulateCompareOutcome:
    """The comparison of two simulate runs and where it was written."""

    compare: SimulateComparison
    json_path: Path


def write_comparison(comparison: SimulateComparison, out: Path) -> SimulateCompareOutcome:
    """Write compare.json into ``out`` (mode 0600, atomically)."""
    path = out / COMPARISON_FILE
    document = comparison.model_dump(mode="json", by_alias=True)
    with private_atomic_writer(path) as handle:
        handle.write(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    return SimulateCompareOutcome(comparison, path)
