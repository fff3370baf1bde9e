"""Verdicts that checks reach without a judge.

A state check is a fact about the agent's data, so it decides before any judge is asked: one
that found other rows fails the flow (its owner the check's, else ``agent_execution``; the
query and what it found as evidence), one that could not be made leaves the flow
``uncertain`` (reason ``state_check_error``).

A checks-only run (``--judge none``) decides by the checks alone: a failing check fails the
flow; a flow whose state checks all hold, and that no other check fails, passes; a flow with
nothing to decide it (no state check, no failing check) gets no verdict and stays
``unjudged``, counted apart and never a failure (a judge can decide it later).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agent_backtest.errors import UserError, bounded
from agent_backtest.simulate.checks import CheckFailure
from agent_backtest.simulate.models import ConversationRecord, Flow, Verdict
from agent_backtest.simulate.rubric import Owners
from agent_backtest.simulate.state_checks import STATE_OWNER

STATE_CHECK = "state"
STATE_CATEGORY = "state_mismatch"


def check_state_owners(flows: Iterable[Flow], owners: Owners) -> None:
    """Every owner a state check names is one of the taxonomy's (and the default is too)."""
    known = owners.of_failures()
    for flow in flows:
        for check in flow.state:
            owner = check.owner or STATE_OWNER
            if owner not in known:
                raise UserError(
                    f"flow {flow.id}: a state check's owner {owner!r} is not one of {known}: "
                    "name one of them, or add it to the owners file",
                    "owners",
                )


def state_verdict(conversation: ConversationRecord, common: dict[str, Any]) -> Verdict | None:
    """The verdict a state check reaches on its own: uncertain when one could not be made,
    fail when one found other data; None when every check held (or there were none)."""
    unread = [result for result in conversation.state if result.error is not None]
    if unread:
        return Verdict(
            **common,
            verdict="uncertain",
            decided_by="check",
            check=STATE_CHECK,
            reason="state_check_error",
            evidence=bounded("; ".join(result.describe() for result in unread)),
            reproduction=_all_said(conversation),
        )
    failed = [result for result in conversation.state if not result.holds]
    if not failed:
        return None
    return Verdict(
        **common,
        verdict="fail",
        owner=failed[0].check.owner or STATE_OWNER,
        failure_category=STATE_CATEGORY,
        evidence=bounded("; ".join(result.describe() for result in failed)),
        reproduction=_all_said(conversation),
        decided_by="check",
        check=STATE_CHECK,
    )


def checks_only_verdict(
    conversation: ConversationRecord,
    common: dict[str, Any],
    failed: tuple[str, CheckFailure] | None,
    reproduction: Sequence[str],
) -> Verdict | None:
    """A checks-only run's verdict once no state check failed: the failing check's, a pass
    when state checks held, else None (unjudged)."""
    if failed is not None:
        name, failure = failed
        return Verdict(
            **common,
            verdict="fail",
            owner=failure.owner,
            failure_category=failure.failure_category,
            failed_turns=sorted(set(failure.failed_turns)),
            evidence=failure.evidence,
            reproduction=list(reproduction),
            decided_by="check",
            check=name,
        )
    if not conversation.state:
        return None
    return Verdict(
        **common,
        verdict="pass",
        evidence=bounded("; ".join(result.describe() for result in conversation.state)),
        reproduction=_all_said(conversation),
        decided_by="check",
        check=STATE_CHECK,
    )


def _all_said(conversation: ConversationRecord) -> list[str]:
    """Every user message: the data is checked after the whole conversation."""
    return [turn.user for turn in conversation.turns]
