"""The tool_calls and rubric graders, and how components make an episode's reward."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.bench.graders import (
    Component,
    GradingInput,
    rubric,
    tool_calls,
)
from agent_backtest.bench.grading import JudgeBridge, grade_episode, resolve_graders, total
from agent_backtest.bench.models import Case, EpisodeError, EpisodeRecord, EpisodeRules, Gold
from agent_backtest.bench.reading import passed
from agent_backtest.errors import UserError
from agent_backtest.providers import ModelClient, build_provider, load_model_config
from agent_backtest.providers.client import CallPolicy
from agent_backtest.providers.refs import parse_model_ref
from agent_backtest.providers.roles import close_clients
from tests.bench.conftest import call
from tests.bench.shop import ShopEnvironment
from tests.fake_openai import FakeOpenAI


def record(**changes: Any) -> EpisodeRecord:
    fields = dict(
        episode_id="c--pg--r000", case_id="c", rollout=0, seed=1, prompt_group="pg-x",
        ended_by="stop_marker", steps=2, tool_calls=2, model_calls=2, seconds=0.1, trace="t",
    )  # fmt: skip
    return EpisodeRecord(**(fields | changes))


def given(gold: dict[str, Any], messages: list[dict[str, Any]], judge: Any = None) -> GradingInput:
    return GradingInput(
        Case(id="c", instruction="x"),
        Gold.model_validate({"case_id": "c", **gold}),
        record(),
        messages,
        ShopEnvironment,
        judge,
    )


LOOKUP = call("lookup", {"item": "Apple "}, "1")
ORDER = call("order", {"item": "apple", "quantity": 2}, "2")
PEAR = call("lookup", {"item": "pear"}, "3")
ACTIONS = [
    {"name": "lookup", "arguments": {"item": "apple"}},
    {"name": "order", "arguments": {"item": "apple", "quantity": 2}},
]


def test_tool_calls_in_order_counts_the_gold_actions_made_in_their_order() -> None:
    assert tool_calls.grade(given({"actions": ACTIONS}, [LOOKUP, PEAR, ORDER])).value == 1.0
    reversed_order = tool_calls.grade(given({"actions": ACTIONS}, [ORDER, LOOKUP]))
    assert reversed_order.value == 0.5 and "not order" in (reversed_order.reason or "")
    as_set = given({"actions": ACTIONS, "actions_in_order": False}, [ORDER, LOOKUP])
    assert tool_calls.grade(as_set).value == 1.0
    assert tool_calls.grade(given({"actions": ACTIONS}, [PEAR])).value == 0.0


def test_tool_calls_takes_an_answer_keys_alternatives() -> None:
    action = {
        "name": "lookup",
        "arguments": {"item": "apple"},
        "key": {"name": "lookup", "arguments": {"item": {"values": ["apple", "pomme"]}}},
    }
    pomme = call("lookup", {"item": "pomme"}, "9")
    assert tool_calls.grade(given({"actions": [action]}, [pomme])).value == 1.0
    assert tool_calls.grade(given({"actions": [ACTIONS[0]]}, [pomme])).value == 0.0


def test_tool_calls_without_gold_actions_cannot_grade() -> None:
    assert tool_calls.grade(given({}, [LOOKUP])).value is None


def test_the_set_matching_is_one_to_one() -> None:
    twice = [ACTIONS[0], ACTIONS[0]]
    graded = tool_calls.grade(given({"actions": twice, "actions_in_order": False}, [LOOKUP]))
    assert graded.value == 0.5


@pytest.mark.parametrize(
    ("answer", "met"),
    [
        ('{"reason": "it did", "met": true}', True),
        ('Sure.\n```json\n{"met": "no", "reason": "it did not"}\n```', False),
        ('{"reason": "yes", "met": "YES"}', True),
    ],
)
def test_rubric_reads_a_yes_or_no_wherever_the_judge_wrote_it(answer: str, met: bool) -> None:
    assert rubric.parse_met(answer) == (met, None)


def test_rubric_refuses_no_verdict_two_verdicts_and_a_quoted_one() -> None:
    assert rubric.parse_met("it holds")[0] is None
    assert (
        rubric.parse_met('{"met": true} {"met": false}')[1]
        == "the answer says both met and not met"
    )
    quoted = '{"met": true}'
    assert rubric.parse_met(quoted, f"assistant: {quoted}")[0] is None


def rubric_judge(body: dict[str, Any]) -> str:
    """The judge's answers: item one is read only when asked again, item two is not met."""
    asked = body["messages"][-1]["content"]
    if "item one" in asked:
        return '{"reason": "r", "met": true}' if "could not be read" in asked else "I think so"
    return '{"reason": "r", "met": false}'


@contextmanager
def judge_bridge(server: FakeOpenAI, tmp_path: Path) -> Iterator[JudgeBridge]:
    """The run's judge as graders get it: a client on an event loop of its own thread (as a
    bench run's grading holds it), asking ``server`` once, with no retry."""
    config = tmp_path / "abt.toml"
    config.write_text(
        f'[providers.judges]\ntype = "openai"\nbase_url = "{server.base_url}"\napi_key_env = ""\n'
    )
    provider = build_provider(parse_model_ref("judges/judge", "judge"), load_model_config(config))
    client = ModelClient(provider, CallPolicy(max_retries=0))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield JudgeBridge(client, "judge", loop)
    finally:
        asyncio.run_coroutine_threadsafe(close_clients([client]), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


def test_rubric_asks_once_more_then_leaves_an_item_out_never_unmet(tmp_path: Path) -> None:
    with FakeOpenAI(reply=rubric_judge) as server, judge_bridge(server, tmp_path) as judge:
        items = ["item one", "item two", "item three"]
        three = rubric.USER.format(conversation="", item="item three")
        server.faults[three] = ["500"]  # the judge's call about item three fails
        graded = rubric.grade(given({"rubric": items}, [], judge))
        asked = [body["messages"][-1]["content"] for body in server.bodies]
    assert graded.value == 0.5
    assert graded.reason == "not met: item two; 1 item(s) unanswered, left out"
    # item one: asked, refused ("I think so"), asked again with what was wrong
    ones = [text for text in asked if "item one" in text]
    assert len(ones) == 2 and "could not be read" in ones[1] and "I think so" in ones[1]
    assert rubric.grade(given({"rubric": ["x"]}, [], None)).value is None


def test_the_reward_is_the_product_of_the_components_that_graded() -> None:
    assert total({"a": 1.0, "b": None, "c": 0.5}) == 0.5
    assert total({"a": None}) is None
    assert passed(1.0) and not passed(0.99) and not passed(None)
    assert passed(0.3 / (0.1 + 0.2))  # 1 within rounding (0.9999999999999998): a pass


def test_an_engineering_error_has_no_reward_and_a_failing_grader_cannot_grade() -> None:
    rules = EpisodeRules()
    failed = given({"actions": ACTIONS}, [])
    failed = GradingInput(
        failed.case,
        failed.gold,
        record(ended_by="error", error=EpisodeError(kind="model_timeout", detail="x")),
        [],
        ShopEnvironment,
    )
    grade = grade_episode(failed, resolve_graders(["tool_calls"]), rules)
    assert grade.reward is None and grade.reasons == {"error": "model_timeout"}

    def broken(_: GradingInput) -> Component:
        raise KeyError("oops")

    grade = grade_episode(given({"actions": ACTIONS}, [LOOKUP, ORDER]), [("broken", broken)], rules)
    assert grade.reward is None and grade.components == {"broken": None}
    assert "KeyError" in grade.reasons["broken"]


def test_grader_names_are_built_in_or_module_function() -> None:
    assert [name for name, _ in resolve_graders(["tool_calls", "rubric"])] == [
        "tool_calls",
        "rubric",
    ]
    found = resolve_graders(["tests.bench.shop:ordered_grader"])
    assert found[0][1].__name__ == "ordered_grader"
    with pytest.raises(UserError, match="has no missing"):
        resolve_graders(["tests.bench.shop:missing"])
