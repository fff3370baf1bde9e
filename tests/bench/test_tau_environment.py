"""The airline environment: the contract, fresh state per episode, the state hash, and every
tool answer of 100 recorded GPT-4o episodes reproduced byte for byte."""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.bench.environment import Environment
from agent_backtest.bench.environments import environment_factory
from agent_backtest.bench.models import Case
from agent_backtest.bench.tau_airline import AirlineEnvironment
from agent_backtest.bench.tau_airline.database import TABLES, Database
from agent_backtest.bench.tau_airline.state_hash import CanonicalDatabase
from agent_backtest.trace.serialize import canonical_json

DATA = resources.files("agent_backtest.bench.tau_airline") / "data"
CASE = Case(id="0")


def shipped_hash() -> str:
    """The hash of the database files as they are, computed the slow, obvious way."""
    tables = {name: json.loads((DATA / f"{name}.json").read_text()) for name in TABLES}
    return "sha256:" + hashlib.sha256(canonical_json(tables)).hexdigest()


def whole(db: Database) -> dict[str, Any]:
    return {name: {**db.base.records[name], **db.changed[name]} for name in TABLES}


def test_the_shipped_name_makes_an_environment_that_follows_the_protocol() -> None:
    environment = environment_factory("tau_airline")()
    assert isinstance(environment, AirlineEnvironment)
    assert isinstance(environment, Environment)
    assert environment.name == "tau_airline"


def test_tools_are_the_fourteen_recorded_definitions(tau_tools: Path) -> None:
    environment = AirlineEnvironment()
    offered = environment.tools()
    assert offered == json.loads(tau_tools.read_text()) and len(offered) == 14
    offered[0]["function"]["parameters"].clear()  # the caller's copy
    assert environment.tools() == json.loads(tau_tools.read_text())


def test_policy_is_the_recorded_system_prompt(tau_trajectories: Path) -> None:
    recorded = json.loads(tau_trajectories.read_text())[0]["traj"][0]
    assert recorded["role"] == "system"
    assert AirlineEnvironment().policy() == recorded["content"]


def test_a_fresh_environment_hashes_the_shipped_files() -> None:
    assert AirlineEnvironment().state_hash() == shipped_hash()


def test_the_hash_of_a_changed_database_is_the_hash_of_its_whole_canonical_json() -> None:
    environment = AirlineEnvironment()
    environment.call("cancel_reservation", {"reservation_id": "AIXC49"})
    environment.call("send_certificate", {"user_id": "mia_li_3668", "amount": 100})
    db = environment._db
    expected = "sha256:" + hashlib.sha256(canonical_json(whole(db))).hexdigest()
    assert environment.state_hash() == expected != shipped_hash()


def test_the_hash_of_added_records_is_the_hash_of_the_whole_canonical_json() -> None:
    environment = AirlineEnvironment()
    booking = json.loads(
        environment.call("get_reservation_details", {"reservation_id": "AIXC49"}).output
    )
    environment.call(
        "book_reservation",
        {
            "user_id": "mia_li_3668",
            "origin": "JFK",
            "destination": "SEA",
            "flight_type": "one_way",
            "cabin": "economy",
            "flights": [{"flight_number": "HAT136", "date": "2024-05-20"}],
            "passengers": booking["passengers"],
            "payment_methods": [{"payment_id": "credit_card_4421486", "amount": 0}],
            "total_baggages": 0,
            "nonfree_baggages": 0,
            "insurance": "no",
        },
    )
    db = environment._db
    for key in ("000000", "ZZZZZZ", "AIXC49A"):  # before every key, after every key, between
        db.add("reservations", key, {"reservation_id": key})
    expected = "sha256:" + hashlib.sha256(canonical_json(whole(db))).hexdigest()
    assert environment.state_hash() == expected


@pytest.mark.parametrize("changed", [{}, {"b": {"x": 1}}, {"b": {"x": 1}, "a": {"y": [2.5]}}])
def test_a_hash_with_changes_is_the_hash_of_the_changed_databases_canonical_json(
    changed: dict[str, Any],
) -> None:
    for shipped in ({}, {"a": {"y": 1}}, {"c": {}, "a": {"y": 1}}):
        tables = {"t": shipped, "u": {"k": [1]}}
        edited = {"t": {**shipped, **changed}, "u": {"k": [1]}}
        expected = "sha256:" + hashlib.sha256(canonical_json(edited)).hexdigest()
        changes = {"u": {"k": [1]}, "t": changed}  # tables out of order
        assert CanonicalDatabase.of(tables).state_hash(changes) == expected


def test_reset_starts_afresh_and_episodes_never_share_state() -> None:
    first, second = AirlineEnvironment(), AirlineEnvironment()
    first.reset(CASE)
    second.reset(CASE)
    first.call("cancel_reservation", {"reservation_id": "AIXC49"})
    assert second.state_hash() == shipped_hash()
    assert json.loads(second.call("get_reservation_details", {"reservation_id": "AIXC49"}).output)[
        "payment_history"
    ] == [{"payment_id": "credit_card_4421486", "amount": 123}]
    first.reset(CASE)
    assert first.state_hash() == shipped_hash()


def test_equal_states_hash_equal_whatever_the_order_of_changes() -> None:
    one, other = AirlineEnvironment(), AirlineEnvironment()
    one.call("cancel_reservation", {"reservation_id": "AIXC49"})
    one.call("send_certificate", {"user_id": "mia_li_3668", "amount": 100})
    other.call("send_certificate", {"user_id": "mia_li_3668", "amount": 100})
    other.call("cancel_reservation", {"reservation_id": "AIXC49"})
    assert one.state_hash() == other.state_hash()


def recorded_calls(item: dict[str, Any]) -> list[tuple[str, dict[str, Any], str]]:
    """(tool, arguments, recorded answer) of each tool call a trajectory ran."""
    calls = {}
    found = []
    for message in item["traj"]:
        if message["role"] == "assistant" and message.get("tool_calls"):
            call = message["tool_calls"][0]
            calls[call["id"]] = call["function"]
        elif message["role"] == "tool":
            function = calls[message["tool_call_id"]]
            found.append((function["name"], json.loads(function["arguments"]), message["content"]))
    return found


def test_every_recorded_tool_answer_is_reproduced(tau_trajectories: Path) -> None:
    environment = AirlineEnvironment()
    compared = 0
    for item in json.loads(tau_trajectories.read_text()):
        environment.reset(Case(id=str(item["task_id"])))
        for tool, arguments, recorded in recorded_calls(item):
            # The trajectories predate τ-bench's renaming of the users' address field
            # "province" to "state"; nothing else of the database changed since.
            expected = recorded.replace('"province":', '"state":')
            assert environment.call(tool, arguments).output == expected, (item["task_id"], tool)
            compared += 1
    assert compared == 621
