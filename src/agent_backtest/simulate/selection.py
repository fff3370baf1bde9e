"""Which flows a run plays: the flows of an earlier run by verdict and owner, less the seeds
already judged against the same target, by family, a per-family cap taken round-robin, an offset
and a limit, and what becomes of the flows that may change the agent's data."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

from agent_backtest.errors import UserError
from agent_backtest.simulate.coverage import seed_of
from agent_backtest.simulate.earlier import EarlierRun, read_earlier, runs_under
from agent_backtest.simulate.flows import LocatedFlow, read_flows
from agent_backtest.simulate.layout import FLOWS
from agent_backtest.simulate.models import Flow, Verdict

VERDICTS: tuple[str, ...] = get_args(Verdict.model_fields["verdict"].annotation)


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
    from_verdicts: Sequence[str] = ()
    """With flows from an earlier run: keep only those it judged so (pass, fail, uncertain)."""
    from_owners: Sequence[str] = ()
    """With flows from an earlier run: keep only those whose verdict names one of these owners."""
    from_run: Path | None = None
    """Play the flows of this earlier simulate run (as it played them) instead of a flows file."""
    exclude_judged: Sequence[Path] = ()
    """Leave out the seeds these runs (or folders of runs) judged pass or fail, same target."""


@dataclass
class Source:
    """The flows a selection starts from, and how many were left out before it and why."""

    path: Path
    """The file they were read from: the flows file, or the earlier run's flows.jsonl."""
    flows: list[LocatedFlow]
    left_out: Counter[str]
    consulted: list[Path]
    """The runs of ``exclude_judged`` that played through the same target."""


@dataclass
class Selected:
    """The flows to play, and how many were left out as possibly changing the agent's data."""

    flows: list[LocatedFlow]
    skipped_may_change_state: int = 0
    may_change_state: set[str] = field(default_factory=set)
    """Ids of the selected flows that may change state (they are isolated)."""


def source_flows(
    flows_file: Path | None, selection: FlowSelection, target: str, sha256: str
) -> Source:
    """The flows file's flows, or the earlier run's by verdict and owner, less the seeds already
    judged through the target named ``target`` whose file has this ``sha256``."""
    if (flows_file is None) == (selection.from_run is None):
        raise UserError(
            "give FLOWS or --from RUN (the flows of an earlier run), not both"
            if flows_file
            else "give FLOWS, or --from RUN to play the flows of an earlier run",
            "flows",
        )
    if selection.from_run is None and (selection.from_verdicts or selection.from_owners):
        parameter = "from_verdicts" if selection.from_verdicts else "from_owners"
        raise UserError("filters the flows of an earlier run: add --from RUN", parameter)
    left_out: Counter[str] = Counter()
    if selection.from_run is not None:
        path = selection.from_run / FLOWS
        earlier = read_earlier(selection.from_run, "from_run")
        flows, left_out["not_matching"] = from_earlier(
            earlier, selection.from_verdicts, selection.from_owners
        )
    else:
        assert flows_file is not None
        path, flows = flows_file, read_flows(flows_file)
    return _less_judged(path, flows, left_out, selection, target, sha256)


def generated_source(
    capabilities: Path,
    flows: list[LocatedFlow],
    selection: FlowSelection,
    target: str,
    sha256: str,
) -> Source:
    """The teacher's flows (from the ``capabilities`` file), less the seeds already judged
    through the same target."""
    if selection.from_run is not None:
        raise UserError("plays an earlier run's flows: leave out --generate", "from_run")
    return _less_judged(capabilities, flows, Counter(), selection, target, sha256)


def _less_judged(
    path: Path,
    flows: list[LocatedFlow],
    left_out: Counter[str],
    selection: FlowSelection,
    target: str,
    sha256: str,
) -> Source:
    """The source of ``flows`` without the seeds the runs of ``exclude_judged`` judged."""
    runs = runs_under(selection.exclude_judged, "exclude_judged")
    flows, judged = without_judged(flows, runs, target, sha256)
    left_out.update(judged)
    if not flows:
        parameter = "exclude_judged" if judged else "from_verdicts"
        raise UserError(f"no flow is left to play: {describe_left_out(left_out)}", parameter)
    consulted = [run.path for run in runs if run.same_target(target, sha256)]
    return Source(path, flows, +left_out, consulted)


_LEFT_OUT = {
    "not_matching": "not matching the verdicts and owners asked for",
    "judged_pass": "judged pass before",
    "judged_fail": "judged fail before",
}


def describe_left_out(left_out: Mapping[str, int]) -> str:
    """How many flows were left out and why, in words."""
    return ", ".join(f"{left_out[k]} {why}" for k, why in _LEFT_OUT.items() if left_out.get(k))


def from_earlier(
    earlier: EarlierRun, verdicts: Sequence[str], owners: Sequence[str]
) -> tuple[list[LocatedFlow], int]:
    """The earlier run's flows, as played, whose verdict is one of ``verdicts`` and whose owner
    one of ``owners`` (either empty: any); with how many were left out."""
    _refuse_unknown(
        verdicts, VERDICTS, "from_verdicts", "no verdict is called", f": give {', '.join(VERDICTS)}"
    )
    named = {v.owner for v in earlier.verdicts.values() if v.owner}
    _refuse_unknown(
        owners,
        named,
        "from_owners",
        f"no verdict of {earlier.path} names the owner",
        f" (its verdicts name: {', '.join(sorted(named)) or 'no owner'})",
    )
    kept = [
        located
        for located in earlier.flows
        if _matches(earlier.verdicts.get(located.flow.id), verdicts, owners)
    ]
    return kept, len(earlier.flows) - len(kept)


def _matches(verdict: Verdict | None, verdicts: Sequence[str], owners: Sequence[str]) -> bool:
    if not verdicts and not owners:
        return True
    if verdict is None:  # not judged: no filter can say anything of it
        return False
    if verdicts and verdict.verdict not in verdicts:
        return False
    return not owners or verdict.owner in owners


def without_judged(
    flows: list[LocatedFlow], earlier: Sequence[EarlierRun], target: str, sha256: str
) -> tuple[list[LocatedFlow], Counter[str]]:
    """The flows whose seed no run of ``earlier`` judged pass or fail through the same target
    (name and file sha256); with how many were left out as judged ``pass`` and ``fail``.

    A seed left ``uncertain`` is played again; when runs disagree the latest run's verdict
    is the one counted."""
    decided: dict[str, str] = {}
    for run in sorted(earlier, key=lambda r: r.manifest.created_at):
        if run.same_target(target, sha256):
            decided |= {seed: v.verdict for seed, v in run.decided().items()}
    left_out: Counter[str] = Counter()
    kept = []
    for located in flows:
        verdict = decided.get(seed_of(located.flow))
        if verdict is None:
            kept.append(located)
        else:
            left_out[f"judged_{verdict}"] += 1
    return kept, left_out


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
    _refuse_unknown(
        families,
        present,
        "families",
        "no flow of the families",
        f" (the file has: {', '.join(sorted(present))})",
    )
    return [f for f in flows if f.flow.family in families]


def _refuse_unknown(
    asked: Iterable[str], known: Iterable[str], parameter: str, problem: str, known_text: str
) -> None:
    """A user error naming the values of ``parameter`` that are not ``known``: ``problem``, the
    unknown values, then ``known_text`` (what there is)."""
    unknown = sorted(set(asked) - set(known))
    if unknown:
        raise UserError(f"{problem} {', '.join(unknown)}{known_text}", parameter)


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
