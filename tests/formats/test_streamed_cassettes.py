"""Real cassettes whose answers were streamed: every recorded call becomes its unit.

The cassettes under ``tests/fixtures/cassette/streams/`` come from five projects' test suites
(see PROVENANCE.md there): chat-completions chunks (LiteLLM's among them), Responses API events
and Anthropic message events. The expected units below were written by hand from the recorded
``data:`` lines (the text deltas joined, the tool-call fragments joined, the usage of the final
chunk or event).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.formats.conformance import assert_replayable, read_sample, unit, units_of

STREAMS = Path(__file__).resolve().parent.parent / "fixtures" / "cassette" / "streams"
SAMPLES = sorted(STREAMS.glob("*.yaml"))
CITY_TOOL = "get_current_weather"
ANTHROPIC_TEXT = (
    "Certainly! I can help you with that information. To get the weather and current time in "
    "San Francisco, I'll need to use two separate functions. Let me fetch that data for you."
)
THINKING = (
    "This is a straightforward question about pedestrian safety. I should provide clear, "
    "helpful advice about how to safely cross a street. This is basic safety information that "
    "could help prevent accidents."
)


OPENAI_USAGE_DETAILS = {"cached_input_tokens": 0, "reasoning_tokens": 0}


def openai_usage(input_tokens: int, output_tokens: int, total_tokens: int) -> dict[str, int]:
    """The usage of an OpenAI answer as a unit reports it, cache and reasoning counts 0."""
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": total_tokens,
        **OPENAI_USAGE_DETAILS,
    }


EXPECTED: dict[str, list[dict[str, Any]]] = {
    # One call in fragments: '{"' 'location' '":"' 'San' ' Francisco' '"}'; no usage was asked for.
    "openllmetry_chat_tools_streaming": [
        unit(
            model="gpt-3.5-turbo",
            user=["What's the weather like in San Francisco?"],
            tools=[CITY_TOOL],
            answer_calls=[[CITY_TOOL, {"location": "San Francisco"}]],
            finish_reason="tool_calls",
        )
    ],
    # Two calls told apart by index 0 and 1; include_usage puts the usage in a last chunk.
    "otel_chat_multiple_tools_streaming": [
        unit(
            model="gpt-4o-mini",
            system=["You're a helpful assistant."],
            user=["What's the weather in Seattle and San Francisco today?"],
            tools=[CITY_TOOL],
            answer_calls=[
                [CITY_TOOL, {"location": "Seattle, WA"}],
                [CITY_TOOL, {"location": "San Francisco, CA"}],
            ],
            finish_reason="tool_calls",
            usage={
                "input_tokens": 75,
                "output_tokens": 51,
                "total_tokens": 126,
                **OPENAI_USAGE_DETAILS,
            },
        )
    ],
    # The same question asked twice, each answered "2" " +" " " "2" " equals" " " "4" ".".
    "openllmetry_responses_streaming": [
        unit(
            model="gpt-4.1-nano",
            user=["What is 2+2?"],
            answer_text="2 + 2 equals 4.",
            usage={
                "input_tokens": 14,
                "output_tokens": 9,
                "total_tokens": 23,
                **OPENAI_USAGE_DETAILS,
            },
        )
    ]
    * 2,
    "otel_responses_streaming_instructions": [
        unit(
            model="gpt-4o-mini",
            system=["You are a helpful assistant."],
            user=["Say this is a test"],
            answer_text="This is a test.",
            usage={
                "input_tokens": 22,
                "output_tokens": 6,
                "total_tokens": 28,
                **OPENAI_USAGE_DETAILS,
            },
        )
    ],
    # A function call streamed as argument deltas, then the call's output sent back. The
    # client sent the call back under its item id (fc_…), not the call id the answer gave, so
    # the two requests do not chain into one conversation.
    "pydantic_ai_responses_tool_stream": [
        unit(
            model="gpt-4o",
            user=["What is the capital of France?"],
            tools=["get_capital"],
            answer_calls=[["get_capital", {"country": "France"}]],
            usage={
                "input_tokens": 255,
                "output_tokens": 16,
                "total_tokens": 271,
                **OPENAI_USAGE_DETAILS,
            },
        ),
        unit(
            model="gpt-4o",
            user=["What is the capital of France?"],
            tools=["get_capital"],
            history_calls=[["get_capital", {"country": "France"}]],
            tool_results=[["fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2", "Paris"]],
            answer_text="The capital of France is Paris.",
            usage={
                "input_tokens": 278,
                "output_tokens": 9,
                "total_tokens": 287,
                **OPENAI_USAGE_DETAILS,
            },
        ),
    ],
    # LiteLLM streaming for Datadog's tracer tests: it adds n=1 and include_usage to the body.
    # One call whose arguments came as '{"' 'location' '":"' 'San' ' Francisco' ',' ' CA'
    # '","' 'unit' '":"' 'c' 'elsius' '"}'; the usage in the last chunk.
    "ddtrace_litellm_stream_tools": [
        unit(
            model="gpt-3.5-turbo",
            user=["What is the weather like in San Francisco, CA?"],
            tools=[CITY_TOOL],
            answer_calls=[[CITY_TOOL, {"location": "San Francisco, CA", "unit": "celsius"}]],
            finish_reason="tool_calls",
            usage=openai_usage(85, 24, 109),
        )
    ],
    # Twenty text deltas, "Not" " much" "," … " you" "?".
    "ddtrace_litellm_stream": [
        unit(
            model="gpt-3.5-turbo",
            user=["Hey, what is up?"],
            answer_text=(
                "Not much, just here to chat and assist you with anything you need. How are you?"
            ),
            finish_reason="stop",
            usage=openai_usage(13, 20, 33),
        )
    ],
    # CrewAI's LLM through LiteLLM (is_litellm=True, stream=True): "Hello" "," " world" "!".
    "crewai_litellm_stream": [
        unit(
            model="gpt-4o-mini",
            user=["Say hello world"],
            answer_text="Hello, world!",
            finish_reason="stop",
            usage=openai_usage(10, 4, 14),
        )
    ],
    # The same with temperature 0.5 and max_tokens 50: "1" "," " " "2" … "5" ".".
    "crewai_litellm_stream_parameters": [
        unit(
            model="gpt-4o-mini",
            user=["Count from 1 to 5"],
            answer_text="1, 2, 3, 4, 5.",
            finish_reason="stop",
            usage=openai_usage(14, 14, 28),
        )
    ],
    # Text in block 0, then two tool_use blocks whose input came as input_json_delta fragments;
    # input tokens from message_start, output tokens from message_delta.
    "openllmetry_anthropic_tools_streaming": [
        unit(
            model="claude-3-5-sonnet-20240620",
            user=["What is the weather and current time in San Francisco?"],
            tools=["get_weather", "get_time"],
            answer_text=ANTHROPIC_TEXT,
            answer_calls=[
                ["get_weather", {"location": "San Francisco, CA", "unit": "celsius"}],
                ["get_time", {"timezone": "America/Los_Angeles"}],
            ],
            finish_reason="tool_calls",
            usage={"input_tokens": 506, "output_tokens": 153, "cached_input_tokens": 0},
        )
    ],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_streamed_cassette_yields_its_units(name: str) -> None:
    assert read_sample(STREAMS / f"{name}.yaml") == {"units": EXPECTED[name], "skipped": {}}


def test_anthropic_thinking_stream_keeps_the_reasoning_beside_the_text() -> None:
    (found,) = units_of(STREAMS / "pydantic_ai_anthropic_thinking_stream.yaml")
    assert found.request.model == "claude-sonnet-4-0"
    assert [m.text() for m in found.request.messages] == ["How do I cross the street?"]
    assert found.request.params == {
        "max_tokens": 4096,
        "thinking": {"budget_tokens": 1024, "type": "enabled"},
    }
    content = found.golden.message.content
    assert isinstance(content, list) and [part.type for part in content] == ["reasoning", "text"]
    assert content[0].text == THINKING
    assert (content[0].model_extra or {}).get("signature", "").startswith("EvMCCkYICxgCKkCHP2cS")
    answer = content[1].text or ""
    assert answer.startswith(
        "Here are the basic steps for safely crossing the street:\n\n**At intersections with "
        'traffic lights:**\n- Wait for the pedestrian "Walk" signal\n'
    )
    assert answer.endswith("Always prioritize safety over speed when crossing streets.")
    assert found.golden.finish_reason == "stop"
    assert found.golden.model == "claude-sonnet-4-20250514"
    assert found.golden.usage is not None
    assert (found.golden.usage.input_tokens, found.golden.usage.output_tokens) == (43, 282)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: path.stem)
def test_every_streamed_unit_says_production_streamed(sample: Path) -> None:
    found = units_of(sample)
    assert found
    for each in found:
        assert any(note.startswith("production streamed this answer") for note in each.notes)
        assert "stream" not in each.request.params
        assert "stream_options" not in each.request.params


def test_every_streamed_cassette_is_checked() -> None:
    checked = {*EXPECTED, "pydantic_ai_anthropic_thinking_stream"}
    assert {sample.stem for sample in SAMPLES} == checked
    provenance = (STREAMS / "PROVENANCE.md").read_text()
    for sample in SAMPLES:
        assert sample.name in provenance


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: path.stem)
def test_every_streamed_unit_replays_against_a_strict_server(sample: Path) -> None:
    found = units_of(sample)
    assert_replayable(found)
