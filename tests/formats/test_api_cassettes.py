"""Real cassettes of the Responses API and Anthropic Messages (unstreamed): each call its unit.

The cassettes under ``tests/fixtures/cassette/apis/`` come from three projects' test suites (see
PROVENANCE.md there); two hold gzip-compressed answers. The expected units were written by hand
from the recorded request bodies and the decompressed answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.formats.conformance import assert_replayable, read_sample, unit, units_of

APIS = Path(__file__).resolve().parent.parent / "fixtures" / "cassette" / "apis"
SAMPLES = sorted(APIS.glob("*.yaml"))
OPENAI_DETAILS = {"cached_input_tokens": 0, "reasoning_tokens": 0}
LONDON = ["get_weather", {"location": "London"}]


def london(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    """One of the two recorded London calls: two parallel calls of get_weather each time."""
    return unit(
        model="gpt-4.1-nano",
        user=["What's the weather in London?"],
        tools=["get_weather"],
        answer_calls=[LONDON, LONDON],
        usage={
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
            **OPENAI_DETAILS,
        },
    )


COUNTRY_QUESTION = "What is the largest city in the user country?"
COUNTRY_TOOLS = ["get_user_country", "final_result"]
EXPECTED: dict[str, list[dict[str, Any]]] = {
    # A Responses call whose tool_choice forces get_current_weather.
    "otel_responses_forced_tool_call": [
        unit(
            model="gpt-4o-mini",
            user=["What's the weather in Seattle right now?"],
            tools=["get_current_weather"],
            answer_calls=[["get_current_weather", {"location": "Seattle, WA"}]],
            usage={"input_tokens": 72, "output_tokens": 8, "total_tokens": 80, **OPENAI_DETAILS},
        )
    ],
    # The same request recorded twice (gzip answers); each answer is two function_call items.
    "openllmetry_responses_tool_calls": [london(58, 44), london(59, 45)],
    # A history of text + tool_use, then a tool_result block in a user turn (gzip answer).
    "openllmetry_anthropic_tools_history": [
        unit(
            model="claude-3-5-haiku-20241022",
            user=["What is the weather and current time in San Francisco?"],
            history_calls=[["get_weather", {"location": "San Francisco, CA"}]],
            tool_results=[["call_1", "Sunny and 65 degrees Fahrenheit"]],
            tools=["get_weather", "get_time"],
            answer_calls=[["get_time", {"timezone": "America/Los_Angeles"}]],
            finish_reason="tool_calls",
            usage={"input_tokens": 568, "output_tokens": 58, "cached_input_tokens": 0},
        )
    ],
    # tool_choice {"type": "any"}; the second request continues the first with the tool result.
    "pydantic_ai_anthropic_tool_output": [
        unit(
            model="claude-sonnet-4-5",
            user=[COUNTRY_QUESTION],
            tools=COUNTRY_TOOLS,
            answer_calls=[["get_user_country", {}]],
            finish_reason="tool_calls",
            usage={"input_tokens": 445, "output_tokens": 23, "cached_input_tokens": 0},
        ),
        unit(
            model="claude-sonnet-4-5",
            user=[COUNTRY_QUESTION],
            tools=COUNTRY_TOOLS,
            history_calls=[["get_user_country", {}]],
            tool_results=[["toolu_01X9wcHKKAZD9tBC711xipPa", "Mexico"]],
            answer_calls=[["final_result", {"city": "Mexico City", "country": "Mexico"}]],
            finish_reason="tool_calls",
            usage={"input_tokens": 497, "output_tokens": 56, "cached_input_tokens": 0},
        ),
    ],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_api_cassette_yields_its_units(name: str) -> None:
    assert read_sample(APIS / f"{name}.yaml") == {"units": EXPECTED[name], "skipped": {}}


def test_every_api_cassette_is_checked_and_has_its_provenance() -> None:
    assert {sample.stem for sample in SAMPLES} == set(EXPECTED)
    provenance = (APIS / "PROVENANCE.md").read_text()
    for sample in SAMPLES:
        assert sample.name in provenance


def test_tool_choices_are_read_in_the_chat_completions_form() -> None:
    (forced,) = units_of(APIS / "otel_responses_forced_tool_call.yaml")
    assert forced.request.tool_choice == {
        "type": "function",
        "function": {"name": "get_current_weather"},
    }
    anthropic = units_of(APIS / "pydantic_ai_anthropic_tool_output.yaml")
    assert [u.request.tool_choice for u in anthropic] == ["required", "required"]


def test_the_pydantic_ai_calls_form_one_conversation() -> None:
    found = units_of(APIS / "pydantic_ai_anthropic_tool_output.yaml")
    assert len({u.session_id for u in found}) == 1
    assert found[0].request.params == {"max_tokens": 4096}  # stream: false is transport


def test_unstreamed_answers_carry_no_streamed_note() -> None:
    for sample in SAMPLES:
        for each in units_of(sample):
            assert not any("streamed" in note for note in each.notes), sample.name


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: path.stem)
def test_every_api_unit_replays_against_a_strict_server(sample: Path) -> None:
    found = units_of(sample)
    assert_replayable(found)
