"""Turning sessions into replay units: one per recorded LLM step that has a request and answer."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from agent_backtest.trace import LLMRequest, Session, Step
from agent_backtest.units.agent_config import AgentConfig
from agent_backtest.units.model import Unit, UnitKind, make_unit_id


@dataclass(frozen=True)
class UnitSkip:
    """An LLM step that cannot be replayed, with the reason."""

    session_id: str
    step_id: str
    reason: str
    detail: str


def units_from_session(session: Session, config: AgentConfig) -> Iterator[Unit | UnitSkip]:
    """Every LLM step of the session as a unit, or as a skip saying why it cannot be one."""
    for turn, step, verdict in step_verdicts(session, config):
        yield verdict if isinstance(verdict, UnitSkip) else _unit(session, turn, step, verdict)


def step_verdicts(
    session: Session, config: AgentConfig
) -> Iterator[tuple[int, Step, UnitKind | UnitSkip]]:
    """Each LLM step of the session with its turn's index and what it gives: the kind of its
    unit, or the skip saying why it gives none. Counting units needs no more than this."""
    for turn in session.turns:
        for step in turn.steps:
            if step.kind != "llm" or step.llm is None:
                continue
            problem = _unusable(step)
            if problem:
                yield turn.index, step, UnitSkip(session.id, step.id, *problem)
            else:
                yield turn.index, step, classify(step.name, step.llm.request, config)


def classify(node: str | None, request: LLMRequest, config: AgentConfig) -> UnitKind:
    """router when the node is a router node or every offered tool routes; else action.

    The one rule for a fresh unit and for a unit read back from a units file (:func:`reclassify`).
    """
    if node is not None and node in config.router_nodes:
        return "router"
    tools = request.tools or []
    if tools and all(config.is_routing_tool(tool.name) for tool in tools):
        return "router"
    return "action"


def reclassify(units: Iterable[Unit], config: AgentConfig) -> Iterator[Unit]:
    """Units read back from a units file, with their kind recomputed under the config's rules.

    Only when the config sets router rules: otherwise each unit keeps the kind it was written
    with, since the rules that made it (an earlier ``--router-nodes``, say) are not known here.
    The units are changed in place as they pass.
    """
    if not config.sets_router_rules():
        yield from units
        return
    for unit in units:
        unit.kind = classify(unit.node, unit.request, config)
        yield unit


def _unusable(step: Step) -> tuple[str, str] | None:
    """Why an LLM step cannot be a unit: the blocker its reader named, else what is missing.
    An answer with neither text nor a tool call is never kept as a golden."""
    call = step.llm
    assert call is not None
    if call.unusable is not None:
        return call.unusable.reason, call.unusable.detail
    if call.response is None:
        return "no_response", "the trace records the request but no answer"
    if not call.request.messages:
        return "empty_request", "the request has no messages"
    answer = call.response.message
    if not answer.text().strip() and not answer.tool_calls:
        return "empty_answer", "the recorded answer has neither text nor a tool call"
    return None


def _unit(session: Session, turn_index: int, step: Step, kind: UnitKind) -> Unit:
    """The unit of a usable LLM step, of the kind already found for it."""
    call = step.llm
    assert call is not None and call.response is not None
    return Unit(
        unit_id=make_unit_id(session.id, step.id),
        session_id=session.id,
        turn_index=turn_index,
        step_id=step.id,
        trace_id=step.trace_id,
        node=step.name,
        kind=kind,
        request=call.request,
        golden=call.response,
        recorded_model=call.response.model or call.request.model,
        provider=call.provider,
        agent_version=step.agent_version or (session.agent.version if session.agent else None),
        reconstructed=call.reconstructed,
        tools_missing=call.request.tools is None,
        tools_supplied=call.tools_supplied,
        started_at=step.started_at,
        ended_at=step.ended_at,
        source=session.source,
        notes=call.notes,
    )
