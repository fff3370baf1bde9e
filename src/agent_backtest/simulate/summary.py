"""``summary.json`` of a simulate run: the pass rate overall and per family, with what it rests on.

A conversation **passes** when its verdict is ``pass``. The rate's denominator is the flows with
a decided verdict (pass or fail): an ``uncertain`` verdict (a transport error, a judge that gave
no valid answer, …) is counted apart by its reason, a conversation not judged yet (``--skip-judge``)
is counted as unjudged, and a flow not played is counted as not played; none of them is a
failure. Flows made from one seed share its situation (a retry or a regeneration of one seed
conversation), so every interval is clustered by seed (``seed_id``, else the flow's own id), and
a rate over one seed has no interval at all. A run that repeats its flows (``--k``) counts each
repeat as a flow, clustered with the flow it repeats, and adds pass^k and pass@k (``repeats``,
overall and per family; :mod:`~agent_backtest.simulate.repeats`). ``stop_reasons`` counts why
the conversations ended.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar, Literal

from pydantic import Field

from agent_backtest.record_model import StrictModel, TaggedRecord, schema_tag
from agent_backtest.runs.estimate import ClusteredMean
from agent_backtest.simulate.models import ConversationRecord, Flow, Verdict
from agent_backtest.simulate.repeats import repeat_estimates, seed_of
from agent_backtest.statistics import clustered_mean

SUMMARY_SCHEMA = "abt.simulate_summary/1"
DECIDED = ("pass", "fail")
FlowState = Literal["pass", "fail", "uncertain", "unjudged", "not_played"]


def cluster_of(flow: Flow) -> str:
    """The unit of independence a flow belongs to: its seed, else itself (as written, for a
    repeat)."""
    return seed_of(flow)


class SeedMean(ClusteredMean):
    """A rate over flows, clustered by seed."""

    CLUSTERS: ClassVar[str] = "seeds"
    seeds: int = Field(description="How many seeds those values come from.")


class RepeatFigures(StrictModel):
    """How reliably flows pass over their repeats: "1" … "k" → the figure, clustered by seed."""

    k: int = Field(description="Conversations played per flow.")
    pass_hat_k: dict[str, SeedMean] = Field(
        description="The chance that j conversations of a flow all pass (over flows with j "
        "decided)."
    )
    pass_at_k: dict[str, SeedMean] = Field(
        description="The chance that one of j conversations of a flow passes."
    )


class PassRate(StrictModel):
    """The pass rate of a set of flows, and how every flow of the set was counted."""

    rate: SeedMean = Field(description="Passed over decided (pass or fail) flows.")
    flows: int = Field(description="Flows of the set in flows.jsonl.")
    decided: int = Field(description="Flows judged pass or fail: the rate's denominator.")
    passed: int
    failed: int
    uncertain: int = Field(description="No verdict reached: not in the rate.")
    unjudged: int = Field(description="Played, not judged yet (--skip-judge): not in the rate.")
    not_played: int = Field(description="No recorded conversation: not in the rate.")
    coverage: float | None = Field(
        description="Share of the set's flows the rate covers (decided / flows); None for none."
    )
    repeats: RepeatFigures | None = Field(
        default=None, description="pass^k and pass@k, when the run repeats its flows (--k)."
    )


class SimulateSummary(TaggedRecord):
    """``summary.json`` of a simulate run."""

    schema_: Literal["abt.simulate_summary/1"] = schema_tag(SUMMARY_SCHEMA)
    overall: PassRate
    families: dict[str, PassRate] = Field(description="Per family, in the order flows list them.")
    uncertain_by_reason: dict[str, int] = Field(
        default_factory=dict, description="transport_error, judge_unavailable, … → flows."
    )
    failures_by_owner: dict[str, int] = Field(default_factory=dict)
    failures_by_category: dict[str, int] = Field(default_factory=dict)
    stop_reasons: dict[str, int] = Field(
        default_factory=dict, description="Why the conversations ended → conversations."
    )
    warnings: list[str] = Field(default_factory=list)


def summarise(
    flows: Sequence[Flow],
    conversations: Mapping[str, ConversationRecord],
    verdicts: Iterable[Verdict],
) -> SimulateSummary:
    """The summary of a run's flows, recorded conversations and verdicts."""
    decided = {verdict.flow_id: verdict for verdict in verdicts}
    families: dict[str, list[Flow]] = {}
    for flow in flows:
        families.setdefault(flow.family, []).append(flow)
    kept = [decided[flow.id] for flow in flows if flow.id in decided]
    listed = {flow.id for flow in flows}
    failures = [v for v in kept if v.verdict == "fail"]
    summary = SimulateSummary(
        overall=pass_rate(flows, conversations, decided),
        families={
            name: pass_rate(group, conversations, decided) for name, group in families.items()
        },
        uncertain_by_reason=_sorted_counts(
            v.reason or "unknown" for v in kept if v.verdict == "uncertain"
        ),
        failures_by_owner=_sorted_counts(v.owner or "unknown" for v in failures),
        failures_by_category=_sorted_counts(v.failure_category or "unknown" for v in failures),
        stop_reasons=_sorted_counts(
            c.stop_reason or "unknown" for c in conversations.values() if c.flow_id in listed
        ),
    )
    summary.warnings = _warnings(summary.overall)
    return summary


def pass_rate(
    flows: Sequence[Flow],
    conversations: Mapping[str, ConversationRecord],
    verdicts: Mapping[str, Verdict],
) -> PassRate:
    """The pass rate of ``flows`` clustered by seed, with every flow counted once."""
    states = [(flow, flow_state(flow, conversations, verdicts)) for flow in flows]
    state = Counter(s for _, s in states)
    scored = [(1.0 if s == "pass" else 0.0, cluster_of(flow)) for flow, s in states if s in DECIDED]
    estimate = clustered_mean([v for v, _ in scored], [c for _, c in scored])
    return PassRate(
        rate=SeedMean.of(estimate),
        flows=len(flows),
        decided=len(scored),
        passed=state["pass"],
        failed=state["fail"],
        uncertain=state["uncertain"],
        unjudged=state["unjudged"],
        not_played=state["not_played"],
        coverage=len(scored) / len(flows) if flows else None,
        repeats=_repeats(flows, verdicts),
    )


def _repeats(flows: Sequence[Flow], verdicts: Mapping[str, Verdict]) -> RepeatFigures | None:
    """pass^k and pass@k of a run that repeats its flows; None for one that does not."""
    estimates = repeat_estimates(flows, verdicts)
    if not estimates:
        return None
    return RepeatFigures(
        k=max(estimates),
        pass_hat_k={str(j): SeedMean.of(hat) for j, (hat, _) in estimates.items()},
        pass_at_k={str(j): SeedMean.of(at) for j, (_, at) in estimates.items()},
    )


def flow_state(
    flow: Flow, conversations: Mapping[str, ConversationRecord], verdicts: Mapping[str, Verdict]
) -> FlowState:
    """Where a flow stands: its verdict, or why it has none."""
    verdict = verdicts.get(flow.id)
    if verdict is not None:
        return verdict.verdict
    return "unjudged" if flow.id in conversations else "not_played"


def _sorted_counts(values: Iterable[str]) -> dict[str, int]:
    """Counts, most first, then by name."""
    return dict(sorted(Counter(values).items(), key=lambda item: (-item[1], item[0])))


def _warnings(overall: PassRate) -> list[str]:
    """Everything that qualifies the rate."""
    found = []
    if overall.not_played:
        found.append(
            f"{overall.not_played} flows have no recorded conversation (abt simulate run "
            "--resume RUN plays them): they are not in the rate"
        )
    if overall.unjudged:
        found.append(
            f"{overall.unjudged} conversations are not judged (abt simulate judge RUN --resume "
            "judges them): they are not in the rate"
        )
    if overall.uncertain:
        found.append(
            f"{overall.uncertain} conversations reached no verdict (see uncertain by reason): "
            "they are not in the rate"
        )
    if overall.rate.mean is not None and overall.rate.ci95 is None:
        found.append("the rate rests on one seed: it has no interval")
    return found
