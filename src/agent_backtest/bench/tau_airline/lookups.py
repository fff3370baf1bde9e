"""The airline tools that only read: users, reservations, airports, flights, arithmetic.

Each answers what τ-bench's tool of the same name answers, byte for byte where the agent reads
it: records as ``json.dumps`` prints them (key order of the data, ``", "`` and ``": "``), and
the same error texts, including the ones whose wording is odd (a missing reservation is
``Error: user not found``), since the recorded agents saw exactly those.
"""

from __future__ import annotations

import json
from typing import Any

from agent_backtest.bench.tau_airline.calculator import evaluate
from agent_backtest.bench.tau_airline.database import Database

__all__ = [
    "calculate",
    "get_reservation_details",
    "get_user_details",
    "list_all_airports",
    "search_direct_flight",
    "search_onestop_flight",
    "think",
    "transfer_to_human_agents",
]

AIRPORTS = {
    "SFO": "San Francisco",
    "JFK": "New York",
    "LAX": "Los Angeles",
    "ORD": "Chicago",
    "DFW": "Dallas",
    "DEN": "Denver",
    "SEA": "Seattle",
    "ATL": "Atlanta",
    "MIA": "Miami",
    "BOS": "Boston",
    "PHX": "Phoenix",
    "IAH": "Houston",
    "LAS": "Las Vegas",
    "MCO": "Orlando",
    "EWR": "Newark",
    "CLT": "Charlotte",
    "MSP": "Minneapolis",
    "DTW": "Detroit",
    "PHL": "Philadelphia",
    "LGA": "LaGuardia",
}
"""The airports the tool lists, with their cities, in its order."""


def get_user_details(db: Database, /, *, user_id: str) -> str:
    """The user's profile, payment methods and reservation ids."""
    user = db.get("users", user_id)
    return json.dumps(user) if user is not None else "Error: user not found"


def get_reservation_details(db: Database, /, *, reservation_id: str) -> str:
    """The reservation's flights, passengers, payments and baggage."""
    reservation = db.get("reservations", reservation_id)
    return json.dumps(reservation) if reservation is not None else "Error: user not found"


def list_all_airports(db: Database, /) -> str:
    """The airports and their cities."""
    return json.dumps(AIRPORTS)


def search_direct_flight(db: Database, /, *, origin: str, destination: str, date: str) -> str:
    """The flights from ``origin`` to ``destination`` bookable on ``date``, with that day's
    status, seats and prices."""
    results = []
    for flight in db.values("flights"):
        if flight["origin"] != origin or flight["destination"] != destination:
            continue
        day = flight["dates"].get(date)
        if day is not None and day["status"] == "available":
            results.append({**_without_dates(flight), **day})
    return json.dumps(results)


def search_onestop_flight(db: Database, /, *, origin: str, destination: str, date: str) -> str:
    """Pairs of flights from ``origin`` to ``destination`` through one airport, leaving on
    ``date``, both bookable.

    Kept as τ-bench has it, since agents and gold were made against it: the second flight's
    date is the next day (written ``2024-05-{day + 1}``, so not zero-padded) when the first
    arrives after midnight; a connection is refused when the first's arrival time, compared as
    text, is later than the second's departure; and the second flight's status, seats and
    prices are those of ``date``, not of its own date.
    """
    flights = list(db.values("flights"))
    results = []
    for first in flights:
        if first["origin"] != origin:
            continue
        for second in flights:
            if second["destination"] != destination or first["destination"] != second["origin"]:
                continue
            arrival = first["scheduled_arrival_time_est"]
            next_date = f"2024-05-{int(date[-2:]) + 1}" if "+1" in arrival else date
            if arrival > second["scheduled_departure_time_est"]:
                continue
            if date not in first["dates"] or next_date not in second["dates"]:
                continue
            if (
                first["dates"][date]["status"] != "available"
                or second["dates"][next_date]["status"] != "available"
            ):
                continue
            leg1 = {**_without_dates(first), **first["dates"][date], "date": date}
            leg2 = {**_without_dates(second), **second["dates"][date], "date": next_date}
            results.append([leg1, leg2])
    return json.dumps(results)


def calculate(db: Database, /, *, expression: str) -> str:
    """The value of an arithmetic expression, rounded to 2 places."""
    return evaluate(expression)


def think(db: Database, /, *, thought: str) -> str:
    """Nothing: the thought stays in the transcript."""
    return ""


def transfer_to_human_agents(db: Database, /, *, summary: str) -> str:
    """The transfer's confirmation; the environment ends the episode."""
    return "Transfer successful"


def _without_dates(flight: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in flight.items() if key != "dates"}
