"""The 14 airline tools by name: their definitions as the agent is offered them, and one call.

A call runs as τ-bench's environment runs one: an unknown name answers ``Unknown action NAME``,
and whatever goes wrong inside a tool because of its arguments (one missing or unexpected, a
wrong type, an id that is not there) answers ``Error: <the exception>``, the agent's mistake to
read, with whatever the tool changed before it stopped left changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any

import orjson

from agent_backtest.bench.environment import ToolOutcome
from agent_backtest.bench.tau_airline import changes, lookups
from agent_backtest.bench.tau_airline.database import Database

__all__ = ["TERMINAL", "TOOLS", "definitions", "run_tool"]

TOOLS: dict[str, Callable[..., str]] = {
    "book_reservation": changes.book_reservation,
    "calculate": lookups.calculate,
    "cancel_reservation": changes.cancel_reservation,
    "get_reservation_details": lookups.get_reservation_details,
    "get_user_details": lookups.get_user_details,
    "list_all_airports": lookups.list_all_airports,
    "search_direct_flight": lookups.search_direct_flight,
    "search_onestop_flight": lookups.search_onestop_flight,
    "send_certificate": changes.send_certificate,
    "think": lookups.think,
    "transfer_to_human_agents": lookups.transfer_to_human_agents,
    "update_reservation_baggages": changes.update_reservation_baggages,
    "update_reservation_flights": changes.update_reservation_flights,
    "update_reservation_passengers": changes.update_reservation_passengers,
}
"""Each tool's function of the episode's database and the call's arguments (by keyword)."""

TERMINAL = frozenset({"transfer_to_human_agents"})
"""Tools whose call ends the episode, answered or not."""

# What a tool's arguments can make go wrong (a KeyError for an unknown id in a nested field, a
# TypeError for a missing argument or a string where a number goes, …); anything else is a
# fault of the environment and is raised.
ARGUMENT_FAULTS = (ArithmeticError, AttributeError, LookupError, TypeError, ValueError)


def definitions() -> list[dict[str, Any]]:
    """The tool definitions in the OpenAI function format, as τ-bench offers them; a new copy
    each time, which the caller may change."""
    return orjson.loads(_definitions_bytes())


@cache
def _definitions_bytes() -> bytes:
    return (
        resources.files("agent_backtest.bench.tau_airline") / "data" / "tools.json"
    ).read_bytes()


def run_tool(db: Database, tool: str, arguments: Mapping[str, Any]) -> ToolOutcome:
    """Run one call on ``db`` and return what the agent sees."""
    function = TOOLS.get(tool)
    if function is None:
        return ToolOutcome(f"Unknown action {tool}", error=True)
    # The database keeps what a tool stores (passengers, payments): never the caller's objects,
    # and only what its canonical JSON can hold (no integer beyond 64 bits), so it can be hashed.
    try:
        owned = orjson.loads(orjson.dumps(dict(arguments)))
    except orjson.JSONEncodeError as exc:
        return ToolOutcome(
            f"Error: arguments are not JSON the database can hold: {exc}", error=True
        )
    try:
        output = function(db, **owned)
    except ARGUMENT_FAULTS as exc:
        return ToolOutcome(f"Error: {exc}", error=True)
    return ToolOutcome(output, error=output.startswith("Error:"))
