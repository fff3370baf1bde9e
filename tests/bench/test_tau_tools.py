"""Each of the 14 airline tools on real rows of the shipped database: answers, changes, refusals."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from agent_backtest.bench.models import Case
from agent_backtest.bench.tau_airline import AirlineEnvironment

DATA = resources.files("agent_backtest.bench.tau_airline") / "data"
USERS = json.loads((DATA / "users.json").read_text())
RESERVATIONS = json.loads((DATA / "reservations.json").read_text())
FLIGHTS = json.loads((DATA / "flights.json").read_text())

# Mia Li: two certificates (100, 250) and two credit cards; reservations NO6JO3 (business, 2
# flights), AIXC49 (basic economy), HKEG34 (business, 1 flight).
MIA = "mia_li_3668"
# Task 0's gold booking: JFK → SEA on May 20 through ORD, the 250 certificate and a card.
MIA_BOOKING: dict[str, Any] = {
    "user_id": MIA,
    "origin": "JFK",
    "destination": "SEA",
    "flight_type": "one_way",
    "cabin": "economy",
    "flights": [
        {"flight_number": "HAT136", "date": "2024-05-20"},
        {"flight_number": "HAT039", "date": "2024-05-20"},
    ],
    "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
    "payment_methods": [
        {"payment_id": "certificate_7504069", "amount": 250},
        {"payment_id": "credit_card_4421486", "amount": 5},
    ],
    "total_baggages": 3,
    "nonfree_baggages": 0,
    "insurance": "no",
}


@pytest.fixture
def env() -> AirlineEnvironment:
    environment = AirlineEnvironment()
    environment.reset(Case(id="0"))
    return environment


def answer(env: AirlineEnvironment, tool: str, **arguments: Any) -> Any:
    outcome = env.call(tool, arguments)
    assert not outcome.error, outcome.output
    return json.loads(outcome.output)


def refused(env: AirlineEnvironment, tool: str, expected: str, **arguments: Any) -> None:
    """The tool refuses with ``expected`` and leaves the database as it was."""
    before = env.state_hash()
    outcome = env.call(tool, arguments)
    assert (outcome.output, outcome.error) == (expected, True)
    assert env.state_hash() == before


def test_get_user_details_is_the_row_or_a_refusal(env: AirlineEnvironment) -> None:
    assert env.call("get_user_details", {"user_id": MIA}).output == json.dumps(USERS[MIA])
    refused(env, "get_user_details", "Error: user not found", user_id="mia_li_0000")


def test_get_reservation_details_is_the_row_or_taus_refusal(env: AirlineEnvironment) -> None:
    assert answer(env, "get_reservation_details", reservation_id="AIXC49") == RESERVATIONS["AIXC49"]
    # τ-bench's wording, which the recorded agents saw.
    refused(env, "get_reservation_details", "Error: user not found", reservation_id="ZZZZZZ")


def test_list_all_airports_names_twenty_cities(env: AirlineEnvironment) -> None:
    airports = answer(env, "list_all_airports")
    assert len(airports) == 20
    assert airports["SFO"] == "San Francisco" and airports["LGA"] == "LaGuardia"


def test_search_direct_flight_lists_the_days_bookable_flights(env: AirlineEnvironment) -> None:
    found = answer(env, "search_direct_flight", origin="JFK", destination="SEA", date="2024-05-20")
    expected = [
        number
        for number, flight in FLIGHTS.items()
        if (flight["origin"], flight["destination"]) == ("JFK", "SEA")
        and flight["dates"].get("2024-05-20", {}).get("status") == "available"
    ]
    assert [flight["flight_number"] for flight in found] == expected and expected
    first = found[0]
    assert "dates" not in first and first["status"] == "available"
    assert first["prices"] == FLIGHTS[first["flight_number"]]["dates"]["2024-05-20"]["prices"]


def test_search_onestop_flight_pairs_connecting_flights(env: AirlineEnvironment) -> None:
    pairs = answer(env, "search_onestop_flight", origin="JFK", destination="SEA", date="2024-05-20")
    numbers = [(first["flight_number"], second["flight_number"]) for first, second in pairs]
    assert ("HAT136", "HAT039") in numbers  # task 0's gold connection, through ORD
    for first, second in pairs:
        assert first["origin"] == "JFK" and second["destination"] == "SEA"
        assert first["destination"] == second["origin"]
        assert first["date"] == "2024-05-20"


def test_search_onestop_flight_keeps_taus_next_day_date(env: AirlineEnvironment) -> None:
    pairs = answer(env, "search_onestop_flight", origin="SFO", destination="JFK", date="2024-05-17")
    overnight = [
        (first, second) for first, second in pairs if "+1" in first["scheduled_arrival_time_est"]
    ]
    assert overnight, "an overnight connection from SFO"
    assert {second["date"] for _, second in overnight} == {"2024-05-18"}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("2 * (3 + 4) / 7", "2.0"),
        ("1000 - 327 + 0.125", "673.12"),
        ("1/0", "Error: division by zero"),
        ("__import__('os')", "Error: invalid characters in expression"),
        ("9**9**9", "Error: int too large to convert to float"),
        ("(2)(3)", "Error: 'int' object is not callable"),
        ("1 +", "Error: invalid syntax (<string>, line 1)"),
    ],
)
def test_calculate_answers_as_python_arithmetic(
    env: AirlineEnvironment, expression: str, expected: str
) -> None:
    outcome = env.call("calculate", {"expression": expression})
    assert (outcome.output, outcome.error) == (expected, expected.startswith("Error"))


def test_think_answers_nothing_and_changes_nothing(env: AirlineEnvironment) -> None:
    before = env.state_hash()
    assert env.call("think", {"thought": "the user wants a refund"}).output == ""
    assert env.state_hash() == before and not env.done


def test_transfer_to_human_agents_ends_the_episode_even_when_malformed(
    env: AirlineEnvironment,
) -> None:
    assert env.call("transfer_to_human_agents", {"summary": "refund"}).output == (
        "Transfer successful"
    )
    assert env.done
    env.reset(Case(id="0"))
    assert not env.done
    assert env.call("transfer_to_human_agents", {}).error
    assert env.done


def test_book_reservation_charges_and_uses_up_the_certificate(env: AirlineEnvironment) -> None:
    booked = answer(env, "book_reservation", **MIA_BOOKING)
    assert booked["reservation_id"] == "HATHAT"
    assert [f["price"] for f in booked["flights"]] == [
        FLIGHTS["HAT136"]["dates"]["2024-05-20"]["prices"]["economy"],
        FLIGHTS["HAT039"]["dates"]["2024-05-20"]["prices"]["economy"],
    ]
    assert sum(f["price"] for f in booked["flights"]) == 255
    user = answer(env, "get_user_details", user_id=MIA)
    assert "certificate_7504069" not in user["payment_methods"]
    assert user["reservations"] == [*USERS[MIA]["reservations"], "HATHAT"]
    assert answer(env, "get_reservation_details", reservation_id="HATHAT") == booked


def test_a_second_booking_takes_the_next_id(env: AirlineEnvironment) -> None:
    answer(env, "book_reservation", **MIA_BOOKING)
    card_only = [{"payment_id": "credit_card_4421486", "amount": 255}]
    again = answer(env, "book_reservation", **{**MIA_BOOKING, "payment_methods": card_only})
    assert again["reservation_id"] == "HATHAU"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"user_id": "nobody_1"}, "Error: user not found"),
        (
            {"payment_methods": [{"payment_id": "credit_card_4421486", "amount": 200}]},
            "Error: payment amount does not add up, total price is 255, but paid 200",
        ),
        (
            {"payment_methods": [{"payment_id": "gift_card_0000000", "amount": 255}]},
            "Error: payment method gift_card_0000000 not found",
        ),
        (
            {"payment_methods": [{"payment_id": "certificate_4856383", "amount": 255}]},
            "Error: not enough balance in payment method certificate_4856383",
        ),
        (
            {"flights": [{"flight_number": "HAT999", "date": "2024-05-20"}]},
            "Error: flight HAT999 not found",
        ),
        (
            {"flights": [{"flight_number": "HAT136", "date": "2024-06-20"}]},
            "Error: flight HAT136 not found on date 2024-06-20",
        ),
        (
            {"flights": [{"flight_number": "HAT001", "date": "2024-05-01"}]},
            "Error: flight HAT001 not available on date 2024-05-01",
        ),
    ],
)
def test_book_reservation_refuses_and_changes_nothing(
    env: AirlineEnvironment, change: dict[str, Any], expected: str
) -> None:
    refused(env, "book_reservation", expected, **{**MIA_BOOKING, **change})


def test_a_missing_argument_is_the_agents_error(env: AirlineEnvironment) -> None:
    arguments = {key: value for key, value in MIA_BOOKING.items() if key != "insurance"}
    refused(
        env,
        "book_reservation",
        "Error: book_reservation() missing 1 required keyword-only argument: 'insurance'",
        **arguments,
    )
    assert env.call("fly_me_home", {}).output == "Unknown action fly_me_home"


def test_cancel_reservation_refunds_every_payment(env: AirlineEnvironment) -> None:
    # Basic economy, booked 12 days earlier, no insurance: the policy forbids this cancellation,
    # but τ-bench's tool does not check the policy; the final state shows the breach.
    cancelled = answer(env, "cancel_reservation", reservation_id="AIXC49")
    assert cancelled["status"] == "cancelled"
    assert cancelled["payment_history"] == [
        {"payment_id": "credit_card_4421486", "amount": 123},
        {"payment_id": "credit_card_4421486", "amount": -123},
    ]
    refused(env, "cancel_reservation", "Error: reservation not found", reservation_id="ZZZZZZ")


def test_update_reservation_baggages_charges_added_bags(env: AirlineEnvironment) -> None:
    updated = answer(
        env,
        "update_reservation_baggages",
        reservation_id="NO6JO3",
        total_baggages=4,
        nonfree_baggages=2,
        payment_id="credit_card_1955700",
    )
    assert (updated["total_baggages"], updated["nonfree_baggages"]) == (4, 2)
    assert updated["payment_history"][-1] == {"payment_id": "credit_card_1955700", "amount": 100}


def test_update_reservation_baggages_refusals(env: AirlineEnvironment) -> None:
    bags = {"reservation_id": "NO6JO3", "total_baggages": 3, "nonfree_baggages": 1}
    refused(
        env,
        "update_reservation_baggages",
        "Error: certificate cannot be used to update reservation",
        **bags,
        payment_id="certificate_7504069",
    )
    refused(
        env,
        "update_reservation_baggages",
        "Error: payment method not found",
        **bags,
        payment_id="gift_card_0000000",
    )
    # Mia Wilson's gift card holds 176: ten added bags cost 500.
    reservation = USERS["mei_wilson_7043"]["reservations"][0]
    refused(
        env,
        "update_reservation_baggages",
        "Error: gift card balance is not enough",
        reservation_id=reservation,
        total_baggages=10,
        nonfree_baggages=10 + RESERVATIONS[reservation]["nonfree_baggages"],
        payment_id="gift_card_5107860",
    )


def test_update_reservation_flights_charges_the_difference(env: AirlineEnvironment) -> None:
    old = RESERVATIONS["HKEG34"]["flights"][0]
    new_price = FLIGHTS["HAT290"]["dates"]["2024-05-27"]["prices"]["economy"]
    updated = answer(
        env,
        "update_reservation_flights",
        reservation_id="HKEG34",
        cabin="economy",
        flights=[{"flight_number": "HAT290", "date": "2024-05-27"}],
        payment_id="credit_card_1955700",
    )
    assert updated["flights"][0]["price"] == new_price
    assert updated["payment_history"][-1] == {
        "payment_id": "credit_card_1955700",
        "amount": new_price - old["price"],
    }
    assert updated["cabin"] == "business"  # τ-bench's tool leaves the cabin as it was


def test_update_reservation_flights_keeps_an_unchanged_flights_price(
    env: AirlineEnvironment,
) -> None:
    same = [{"flight_number": "HAT290", "date": "2024-05-27"}]
    updated = answer(
        env,
        "update_reservation_flights",
        reservation_id="HKEG34",
        cabin="business",
        flights=same,
        payment_id="credit_card_1955700",
    )
    assert updated["flights"] == RESERVATIONS["HKEG34"]["flights"]
    assert updated["payment_history"] == RESERVATIONS["HKEG34"]["payment_history"]


def test_update_reservation_flights_refusals(env: AirlineEnvironment) -> None:
    change = {"reservation_id": "HKEG34", "cabin": "economy"}
    refused(
        env,
        "update_reservation_flights",
        "Error: certificate cannot be used to update reservation",
        **change,
        flights=[{"flight_number": "HAT290", "date": "2024-05-27"}],
        payment_id="certificate_7504069",
    )
    refused(
        env,
        "update_reservation_flights",
        "Error: flight HAT001 not available on date 2024-05-01",
        **change,
        flights=[{"flight_number": "HAT001", "date": "2024-05-01"}],
        payment_id="credit_card_1955700",
    )
    refused(
        env,
        "update_reservation_flights",
        "Error: reservation not found",
        **{**change, "reservation_id": "ZZZZZZ"},
        flights=[],
        payment_id="credit_card_1955700",
    )


def test_update_reservation_passengers_keeps_the_count(env: AirlineEnvironment) -> None:
    amelia = [{"first_name": "Amelia", "last_name": "Ahmed", "dob": "1957-03-21"}]
    mia = [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}]
    refused(
        env,
        "update_reservation_passengers",
        "Error: number of passengers does not match",
        reservation_id="HKEG34",
        passengers=amelia + mia,
    )
    updated = answer(env, "update_reservation_passengers", reservation_id="HKEG34", passengers=mia)
    assert updated["passengers"] == mia


def test_send_certificate_adds_one_payment_method_each_time(env: AirlineEnvironment) -> None:
    first = env.call("send_certificate", {"user_id": MIA, "amount": 150})
    assert (
        first.output == "Certificate certificate_3221322 added to user mia_li_3668 with amount 150."
    )
    env.call("send_certificate", {"user_id": MIA, "amount": 50})
    methods = answer(env, "get_user_details", user_id=MIA)["payment_methods"]
    assert methods["certificate_3221322"] == {
        "source": "certificate",
        "amount": 150,
        "id": "certificate_3221322",
    }
    assert methods["certificate_3221323"]["amount"] == 50
    refused(env, "send_certificate", "Error: user not found", user_id="nobody_1", amount=100)


def test_a_tool_never_keeps_the_callers_objects(env: AirlineEnvironment) -> None:
    arguments = json.loads(json.dumps(MIA_BOOKING))
    env.call("book_reservation", arguments)
    booked = env.state_hash()
    arguments["passengers"][0]["first_name"] = "Someone"
    arguments["payment_methods"].clear()
    assert env.state_hash() == booked


def test_arguments_the_database_cannot_hold_are_refused(env: AirlineEnvironment) -> None:
    refused(
        env,
        "send_certificate",
        "Error: arguments are not JSON the database can hold: Integer exceeds 64-bit range",
        user_id=MIA,
        amount=2**70,
    )
