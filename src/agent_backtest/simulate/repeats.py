"""Repeats: each flow played k times, and how reliably it passes (pass^k, pass@k).

With ``k`` above 1 every selected flow becomes k flows, ``ID--1`` … ``ID--k``, each a
conversation of its own with its own verdict; a repeat records the flow it repeats and its
number, which seeds its simulated user (repeat 1 plays with seed 0, as an unrepeated flow
does). Everything that counts flows counts the repeats; the figures of this module count
the flows as written.

pass^k is the chance that k conversations of a flow all pass, pass@k that one of them does
(:mod:`agent_backtest.reporting.passk`), each a mean over flows with its interval clustered by
seed, as every simulate rate is: repeats of one flow, and flows of one seed, are never
independent draws.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from agent_backtest.errors import UserError
from agent_backtest.reporting.passk import pass_at_k, pass_hat_k
from agent_backtest.simulate.models import Flow, Verdict
from agent_backtest.statistics import Estimate, clustered_mean

ID_CHARS = 60
MAX_K = 100


def repeated(flows: Sequence[Flow], k: int) -> list[Flow]:
    """Each flow ``k`` times, as repeats of it (once, as itself, when ``k`` is 1). Repeats of an
    earlier run (``--from``) are first taken back to the flow they repeat, once."""
    if not 1 <= k <= MAX_K:
        raise UserError(f"must be 1 to {MAX_K}, got {k}", "k")
    flows = as_written(flows)
    if k == 1:
        return flows
    played = [
        flow.model_copy(update={"id": repeat_id(flow.id, n), "repeat_of": flow.id, "repeat": n})
        for flow in flows
        for n in range(1, k + 1)
    ]
    seen: set[str] = set()
    for flow in played:
        if flow.id in seen:
            raise UserError(
                f"flow {flow.repeat_of!r} repeated is {flow.id!r}, the id of another: rename one",
                "k",
            )
        seen.add(flow.id)
    return played


def as_written(flows: Sequence[Flow]) -> list[Flow]:
    """The flows as written: each repeat as the flow it repeats, the first time it comes."""
    found: dict[str, Flow] = {}
    for flow in flows:
        if flow.repeat_of is None:
            found.setdefault(flow.id, flow)
        else:
            update = {"id": flow.repeat_of, "repeat_of": None, "repeat": None}
            found.setdefault(flow.repeat_of, flow.model_copy(update=update))
    return list(found.values())


def repeat_id(flow_id: str, n: int) -> str:
    """The id of repeat ``n`` of a flow, within the id length."""
    suffix = f"--{n}"
    return flow_id[: ID_CHARS - len(suffix)] + suffix


def written_id(flow: Flow) -> str:
    """The id of the flow as written: the one a repeat repeats, else its own."""
    return flow.repeat_of or flow.id


def seed_of(flow: Flow) -> str:
    """The unit of independence of a flow and its repeats: its seed, else the flow as written."""
    return flow.seed_id or written_id(flow)


def repeat_estimates(
    flows: Sequence[Flow], verdicts: Mapping[str, Verdict]
) -> dict[int, tuple[Estimate, Estimate]]:
    """pass^j and pass@j of ``flows`` for j = 1 … k over their decided conversations (pass or
    fail; an uncertain or unjudged one is no draw), each over the flows with at least j of
    them; empty for flows without repeats."""
    k = max((flow.repeat or 0 for flow in flows), default=0)
    counts: dict[str, list[int]] = {}
    seeds: dict[str, str] = {}
    for flow in flows:
        tally = counts.setdefault(written_id(flow), [0, 0])
        seeds[written_id(flow)] = seed_of(flow)
        verdict = verdicts.get(flow.id)
        if verdict is not None and verdict.verdict in ("pass", "fail"):
            tally[0] += verdict.verdict == "pass"
            tally[1] += 1
    return {
        j: (_estimate(counts, seeds, j, pass_hat_k), _estimate(counts, seeds, j, pass_at_k))
        for j in range(1, k + 1)
    }


def _estimate(
    counts: Mapping[str, list[int]],
    seeds: Mapping[str, str],
    k: int,
    estimator: Callable[[int, int, int], float],
) -> Estimate:
    """The mean over flows with at least ``k`` decided conversations, clustered by seed."""
    usable = [(flow, tally) for flow, tally in counts.items() if tally[1] >= k]
    values = [estimator(passed, decided, k) for _, (passed, decided) in usable]
    return clustered_mean(values, [seeds[flow] for flow, _ in usable])
