"""The airline tools that change the database: book, cancel, update, compensate.

The final-state grader compares the database an episode left with the one the gold actions
leave, so each tool changes exactly what τ-bench's tool of the same name changes, in the same
order: the checks first, each answering ``Error: …`` with nothing changed, then the writes. The
tools enforce only what τ-bench's tools enforce (ids, dates, seats, balances, sums); the
policy's other rules (who may cancel, basic economy cannot change flights, …) are the agent's
to follow, and breaking them shows in the final state, not in a refusal.
"""

from __future__ import annotations

import json
from typing import Any

from agent_backtest.bench.tau_airline.database import Database

__all__ = [
    "book_reservation",
    "cancel_reservation",
    "send_certificate",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
]

NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
"""The ids a booking takes, the first one free; a fourth booking overwrites the third, as in
τ-bench, whose tasks book three at most."""
CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
"""The ids a sent certificate takes, the first one the user does not hold."""
BAG_FEE = 50
INSURANCE_FEE = 30


def book_reservation(
    db: Database,
    /,
    *,
    user_id: str,
    origin: str,
    destination: str,
    flight_type: str,
    cabin: str,
    flights: list[dict[str, Any]],
    passengers: list[dict[str, Any]],
    payment_methods: list[dict[str, Any]],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: str,
) -> str:
    """Book the flights for the passengers, paid by the payment methods; the reservation."""
    user = db.get("users", user_id)
    if user is None:
        return "Error: user not found"
    reservation_id = next(
        (rid for rid in NEW_RESERVATION_IDS if not db.has("reservations", rid)),
        NEW_RESERVATION_IDS[-1],
    )
    reservation = {
        "reservation_id": reservation_id,
        "user_id": user_id,
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": flights,
        "passengers": passengers,
        "payment_history": payment_methods,
        "created_at": "2024-05-15T15:00:00",
        "total_baggages": total_baggages,
        "nonfree_baggages": nonfree_baggages,
        "insurance": insurance,
    }
    total_price = 0
    for flight in flights:
        refusal = _price_segment(db, flight, cabin, len(passengers))
        if refusal:
            return refusal
        total_price += flight["price"] * len(passengers)
    if insurance == "yes":
        total_price += INSURANCE_FEE * len(passengers)
    total_price += BAG_FEE * nonfree_baggages
    refusal = _check_payments(user, payment_methods, total_price)
    if refusal:
        return refusal
    user = db.writable("users", user_id)
    for payment in payment_methods:
        method = user["payment_methods"][payment["payment_id"]]
        if method["source"] == "gift_card":
            method["amount"] -= payment["amount"]
        elif method["source"] == "certificate":
            del user["payment_methods"][payment["payment_id"]]
    db.add("reservations", reservation_id, reservation)
    user["reservations"].append(reservation_id)
    return json.dumps(reservation)


def cancel_reservation(db: Database, /, *, reservation_id: str) -> str:
    """Cancel the whole reservation, refunding every payment; the reservation."""
    if not db.has("reservations", reservation_id):
        return "Error: reservation not found"
    reservation = db.writable("reservations", reservation_id)
    refunds = [
        {"payment_id": payment["payment_id"], "amount": -payment["amount"]}
        for payment in reservation["payment_history"]
    ]
    reservation["payment_history"].extend(refunds)
    reservation["status"] = "cancelled"
    return json.dumps(reservation)


def update_reservation_baggages(
    db: Database,
    /,
    *,
    reservation_id: str,
    total_baggages: int,
    nonfree_baggages: int,
    payment_id: str,
) -> str:
    """Set the reservation's bags, charging each added non-free bag; the reservation."""
    reservation = db.get("reservations", reservation_id)
    if reservation is None:
        return "Error: reservation not found"
    total_price = BAG_FEE * max(0, nonfree_baggages - reservation["nonfree_baggages"])
    refusal = _check_update_payment(db, reservation["user_id"], payment_id, total_price)
    if refusal:
        return refusal
    reservation = db.writable("reservations", reservation_id)
    reservation["total_baggages"] = total_baggages
    reservation["nonfree_baggages"] = nonfree_baggages
    _charge(db, reservation, payment_id, total_price)
    return json.dumps(reservation)


def update_reservation_flights(
    db: Database,
    /,
    *,
    reservation_id: str,
    cabin: str,
    flights: list[dict[str, Any]],
    payment_id: str,
) -> str:
    """Replace the reservation's flights, paying (or refunded) the difference; the reservation.

    A flight the reservation already has, in the same cabin, keeps its price. The reservation's
    cabin itself is left as it was, and seats are not counted down, as in τ-bench.
    """
    reservation = db.get("reservations", reservation_id)
    if reservation is None:
        return "Error: reservation not found"
    travellers = len(reservation["passengers"])
    total_price = 0
    for flight in flights:
        kept = _kept_segment(reservation, flight, cabin)
        if kept is not None:
            flight.update(
                price=kept["price"], origin=kept["origin"], destination=kept["destination"]
            )
        else:
            refusal = _price_segment(db, flight, cabin, travellers)
            if refusal:
                return refusal
        total_price += flight["price"] * travellers
    total_price -= sum(flight["price"] for flight in reservation["flights"]) * travellers
    refusal = _check_update_payment(db, reservation["user_id"], payment_id, total_price)
    if refusal:
        return refusal
    reservation = db.writable("reservations", reservation_id)
    reservation["flights"] = flights
    _charge(db, reservation, payment_id, total_price)
    return json.dumps(reservation)


def update_reservation_passengers(
    db: Database, /, *, reservation_id: str, passengers: list[dict[str, Any]]
) -> str:
    """Replace the reservation's passengers, as many as it had; the reservation."""
    reservation = db.get("reservations", reservation_id)
    if reservation is None:
        return "Error: reservation not found"
    if len(passengers) != len(reservation["passengers"]):
        return "Error: number of passengers does not match"
    reservation = db.writable("reservations", reservation_id)
    reservation["passengers"] = passengers
    return json.dumps(reservation)


def send_certificate(db: Database, /, *, user_id: str, amount: int) -> str:
    """Give the user a travel certificate of ``amount``, as compensation."""
    user = db.get("users", user_id)
    if user is None:
        return "Error: user not found"
    free = [pid for pid in CERTIFICATE_IDS if pid not in user["payment_methods"]]
    if not free:
        # τ-bench's tool answers nothing here, which its environment cannot pass on.
        return f"Error: user {user_id} already holds {len(CERTIFICATE_IDS)} sent certificates"
    user = db.writable("users", user_id)
    user["payment_methods"][free[0]] = {"source": "certificate", "amount": amount, "id": free[0]}
    return f"Certificate {free[0]} added to user {user_id} with amount {amount}."


def _price_segment(db: Database, flight: dict[str, Any], cabin: str, seats: int) -> str | None:
    """Fill in a requested flight's price, origin and destination; a refusal when it cannot
    be booked for ``seats`` travellers in ``cabin``."""
    number = flight["flight_number"]
    record = db.get("flights", number)
    if record is None:
        return f"Error: flight {number} not found"
    if flight["date"] not in record["dates"]:
        return f"Error: flight {number} not found on date {flight['date']}"
    day = record["dates"][flight["date"]]
    if day["status"] != "available":
        return f"Error: flight {number} not available on date {flight['date']}"
    if day["available_seats"][cabin] < seats:
        return f"Error: not enough seats on flight {number}"
    flight["price"] = day["prices"][cabin]
    flight["origin"] = record["origin"]
    flight["destination"] = record["destination"]
    return None


def _kept_segment(
    reservation: dict[str, Any], flight: dict[str, Any], cabin: str
) -> dict[str, Any] | None:
    """The reservation's own segment matching a requested flight, when the cabin is unchanged."""
    for segment in reservation["flights"]:
        if (
            segment["flight_number"] == flight["flight_number"]
            and segment["date"] == flight["date"]
            and cabin == reservation["cabin"]
        ):
            return segment
    return None


def _check_payments(
    user: dict[str, Any], payments: list[dict[str, Any]], total_price: float
) -> str | None:
    """A booking's refusal: an unknown method, a short balance, or a sum not the price."""
    for payment in payments:
        payment_id, amount = payment["payment_id"], payment["amount"]
        if payment_id not in user["payment_methods"]:
            return f"Error: payment method {payment_id} not found"
        method = user["payment_methods"][payment_id]
        if method["source"] in ("gift_card", "certificate") and method["amount"] < amount:
            return f"Error: not enough balance in payment method {payment_id}"
    paid = sum(payment["amount"] for payment in payments)
    if paid != total_price:
        return (
            f"Error: payment amount does not add up, total price is {total_price}, but paid {paid}"
        )
    return None


def _check_update_payment(
    db: Database, user_id: str, payment_id: str, total_price: float
) -> str | None:
    """An update's refusal: an unknown method, a certificate, or a gift card short of it."""
    methods = _user(db, user_id)["payment_methods"]
    if payment_id not in methods:
        return "Error: payment method not found"
    method = methods[payment_id]
    if method["source"] == "certificate":
        return "Error: certificate cannot be used to update reservation"
    if method["source"] == "gift_card" and method["amount"] < total_price:
        return "Error: gift card balance is not enough"
    return None


def _charge(db: Database, reservation: dict[str, Any], payment_id: str, amount: float) -> None:
    """Take ``amount`` (a refund when negative) from a checked method; record it when not 0."""
    if _user(db, reservation["user_id"])["payment_methods"][payment_id]["source"] == "gift_card":
        user = db.writable("users", reservation["user_id"])
        user["payment_methods"][payment_id]["amount"] -= amount
    if amount != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": amount})


def _user(db: Database, user_id: str) -> dict[str, Any]:
    """The reservation's user, who must exist (a missing one is τ-bench's KeyError)."""
    user = db.get("users", user_id)
    if user is None:
        raise KeyError(user_id)
    return user
