"""The final-state and outputs graders on τ-bench airline cases and real transcripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_backtest.bench.graders import Component, GradingInput, final_state, outputs
from agent_backtest.bench.models import Case, EpisodeRecord, Gold, GoldAction
from agent_backtest.bench.tau_airline import AirlineEnvironment
from tests.bench.test_tau_tools import MIA_BOOKING

BOOKING = MIA_BOOKING  # task 0's gold: one booking for Mia Li
CASE = Case(id="0", metadata={"user_id": "mia_li_3668"})


def grading(
    gold: Gold, state_hash: str | None, messages: list[dict[str, Any]] | None = None
) -> GradingInput:
    record = EpisodeRecord(
        episode_id="0-0",
        case_id="0",
        rollout=0,
        seed=0,
        prompt_group="0",
        ended_by="stop_marker",
        steps=1,
        tool_calls=1,
        model_calls=1,
        seconds=1.0,
        state_hash=state_hash,
        trace="traces/0-0.json",
    )
    return GradingInput(CASE, gold, record, messages or [], AirlineEnvironment)


def episode_hash(*calls: tuple[str, dict[str, Any]]) -> str:
    environment = AirlineEnvironment()
    environment.reset(CASE)
    for tool, arguments in calls:
        environment.call(tool, arguments)
    return environment.state_hash()


GOLD = Gold(case_id="0", actions=[GoldAction(name="book_reservation", arguments=BOOKING)])


def test_final_state_is_one_when_the_episode_did_what_the_gold_does() -> None:
    state = episode_hash(
        ("get_user_details", {"user_id": "mia_li_3668"}), ("book_reservation", BOOKING)
    )
    assert final_state.grade(grading(GOLD, state)) == Component(1.0)


def test_final_state_is_zero_for_another_payment() -> None:
    card_only = {
        **BOOKING,
        "payment_methods": [{"payment_id": "credit_card_4421486", "amount": 255}],
    }
    component = final_state.grade(grading(GOLD, episode_hash(("book_reservation", card_only))))
    assert component.value == 0.0
    assert component.reason and "is not the gold's" in component.reason


def test_a_gold_transfer_does_not_count_against_the_episode_and_a_state_is_needed() -> None:
    gold = Gold(
        case_id="0",
        actions=[
            GoldAction(name="book_reservation", arguments=BOOKING),
            GoldAction(name="transfer_to_human_agents", arguments={"summary": "done"}),
        ],
    )
    assert final_state.grade(grading(gold, episode_hash(("book_reservation", BOOKING)))).value == 1
    missing = final_state.grade(grading(gold, None))
    assert missing.value is None and missing.reason


def test_final_state_takes_the_hash_the_gold_gives() -> None:
    untouched = episode_hash()
    gold = Gold(case_id="0", actions=GOLD.actions, final_state_hash=untouched)
    assert final_state.grade(grading(gold, untouched)).value == 1.0
    assert final_state.grade(grading(gold, episode_hash(("book_reservation", BOOKING)))).value == 0


def answer(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **extra}


def test_outputs_are_found_case_insensitively_with_commas_removed() -> None:
    gold = Gold(case_id="0", outputs=["1,286", "Economy"])
    said = [answer("That is 1,286 dollars in ECONOMY.")]
    # "1,286" is looked for in "that is 1286 dollars…": τ-bench strips the answer's commas only.
    assert outputs.grade(grading(gold, None, said)).value == 0.0
    gold = Gold(case_id="0", outputs=["1286", "Economy"])
    assert outputs.grade(grading(gold, None, said)).value == 1.0


def test_text_beside_a_tool_call_is_not_an_answer() -> None:
    gold = Gold(case_id="0", outputs=["327"])
    call = {"id": "c1", "type": "function", "function": {"name": "think", "arguments": "{}"}}
    beside = [answer("The refund is 327.", tool_calls=[call])]
    component = outputs.grade(grading(gold, None, beside))
    assert (component.value, component.reason) == (0.0, "never said '327'")
    assert outputs.grade(grading(gold, None, [answer("It is 327.")])).value == 1.0


def test_no_outputs_to_say_is_a_pass() -> None:
    assert outputs.grade(grading(Gold(case_id="0"), None)).value == 1.0


def test_outputs_on_a_real_episode_that_said_them(tau_trajectories: Path) -> None:
    items = json.loads(tau_trajectories.read_text())
    solved = next(i for i in items if i["info"]["task"]["outputs"] and i["reward"] == 1.0)
    gold = Gold(case_id=str(solved["task_id"]), outputs=solved["info"]["task"]["outputs"])
    assert outputs.grade(grading(gold, None, solved["traj"])).value == 1.0
