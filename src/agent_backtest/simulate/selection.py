"""Which flows a run plays: by family, a per-family cap taken round-robin, an offset and a limit,
and what becomes of the flows that may change the agent's data."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agent_backtest.errors import UserError
from agent_backtest.simulate.flows import LocatedFlow
from agent_backtest.simulate.models import Flow


@dataclass(frozen=True)
class FlowSelection:
    """The selection asked for."""

    families: Sequence[str] = ()
    """Keep only flows of these families."""
    per_family: int | None = None
    """At most this many flows of each family, taken round-robin across families."""
    offset: int = 0
    """Skip this many flows (after the families and the cap)."""
    limit: int | None = None
    """Play at most this many flows."""


@dataclass
class Selected:
    """The flows to play, and how many were left out as possibly changing the agent's data."""

    flows: list[LocatedFlow]
    skipped_may_change_state: int = 0
    may_change_state: set[str] = field(default_factory=set)
    """Ids of the selected flows that may change state (they are isolated)."""


def may_change_state(flow: Flow, read_only_tools: Iterable[str]) -> bool:
    """True when the flow says it mutates, or says nothing and expects a tool that is not
    declared read-only."""
    if flow.mutates is not None:
        return flow.mutates
    safe = set(read_only_tools)
    return any(tool not in safe for tool in flow.expect_tools)


def select_flows(
    flows: list[LocatedFlow],
    selection: FlowSelection,
    read_only_tools: Iterable[str],
    read_only_only: bool,
    isolating: bool,
) -> Selected:
    """The flows to play; a flow that may change state without isolation is refused here,
    before any turn is sent (or skipped and counted with ``read_only_only``)."""
    read_only = set(read_only_tools)
    chosen = _families(flows, selection.families)
    skipped = 0
    if read_only_only:
        kept = [f for f in chosen if not may_change_state(f.flow, read_only)]
        skipped, chosen = len(chosen) - len(kept), kept
    chosen = _round_robin(chosen, selection.per_family)
    chosen = chosen[selection.offset :]
    if selection.limit is not None:
        chosen = chosen[: selection.limit]
    if not chosen:
        raise UserError(
            "no flow is left to play after the selection"
            + (f" ({skipped} skipped as they may change state)" if skipped else ""),
            "limit" if selection.limit == 0 else "families",
        )
    changing = {f.flow.id for f in chosen if may_change_state(f.flow, read_only)}
    if changing and not isolating:
        first = next(f for f in chosen if f.flow.id in changing)
        raise UserError(
            f"flow {first.flow.id!r} (line {first.line}) may change the agent's data "
            f"({_why(first.flow)}), and {len(changing) - 1} other selected flows too: pass "
            "--read-only-only to skip them, or isolate them with --fixture-db FILE or "
            "--snapshot-cmd and --restore-cmd",
            "flows",
        )
    return Selected(chosen, skipped, changing)


def _why(flow: Flow) -> str:
    if flow.mutates:
        return "it says mutates: true"
    return (
        f"it expects {', '.join(flow.expect_tools)}, not all declared read_only_tools in the "
        "agent config"
    )


def _families(flows: list[LocatedFlow], families: Sequence[str]) -> list[LocatedFlow]:
    if not families:
        return list(flows)
    present = {f.flow.family for f in flows}
    unknown = sorted(set(families) - present)
    if unknown:
        raise UserError(
            f"no flow of the families {', '.join(unknown)} (the file has: "
            f"{', '.join(sorted(present))})",
            "families",
        )
    return [f for f in flows if f.flow.family in families]


def _round_robin(flows: list[LocatedFlow], cap: int | None) -> list[LocatedFlow]:
    """Without a cap, the file's order; with one, one flow of each family in turn (families
    in the order they first appear) until each has given ``cap`` or run out."""
    if cap is None:
        return flows
    queues: dict[str, list[LocatedFlow]] = {}
    for located in flows:
        queues.setdefault(located.flow.family, []).append(located)
    taken: list[LocatedFlow] = []
    for round_ in range(cap):
        taken.extend(queue[round_] for queue in queues.values() if round_ < len(queue))
    return taken
