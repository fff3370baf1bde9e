"""Cassettes recorded around whole agent runs: LangChain agents that stream chat completions,
and OpenAI Agents SDK runs over the Responses API (one of them streamed), each kind from more
than one project's test suite. Every model call becomes its unit; the other HTTP traffic of the
run (LangSmith, a search API, trace ingestion) is skipped by reason.

Expected values were read by hand from the recordings (see ``tests/fixtures/cassette/agents/
PROVENANCE.md``): the tool-call fragments and text deltas of the streamed answers, the request
bodies and the decompressed Responses answers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_backtest.formats import ReadOptions, SessionStream
from agent_backtest.trace import ToolCall
from tests.formats.conformance import assert_replayable, units_of

AGENTS = Path(__file__).resolve().parent.parent / "fixtures" / "cassette" / "agents"
LANGCHAIN = AGENTS / "openllmetry_langchain_agent_streaming.yaml"
AGENTS_SDK = AGENTS / "openllmetry_openai_agents_function_tool.yaml"
LANGCHAIN_TOOL_AGENT = AGENTS / "openinference_langchain_agent_streaming.yaml"
ADDITION_AGENT = AGENTS / "ddtrace_openai_agents_tool_calls.yaml"
STREAMED_AGENT = AGENTS / "ddtrace_openai_agents_streamed.yaml"
HANDOFF_AGENT = AGENTS / "logfire_openai_agents_handoff.yaml"
SAMPLES = sorted(AGENTS.glob("*.yaml"))
SEARCH = "tavily_search_results_json"
# The four agent runs of the LangChain cassette: each one search call, by the id it was given.
SEARCH_CALL_IDS = [
    "call_Do41uhRCrKGPKQuMeRWhVg7A",
    "call_HY2zhnp36TsjjZN28rhXv9Vz",
    "call_uWIWcfQ17uU9ZdBS7xRDchFr",
    "call_SI6Ae34OR6XcydcJK54NGOL5",
]
WEATHER_INSTRUCTIONS = "You get the weather for a city using the get_weather tool."


def test_the_langchain_agent_gives_one_unit_per_streamed_call() -> None:
    found = units_of(LANGCHAIN)
    assert len(found) == 8
    assert len({u.session_id for u in found}) == 4  # four runs of search, then answer
    for run, call_id in enumerate(SEARCH_CALL_IDS):
        search, answer = found[2 * run], found[2 * run + 1]
        assert search.session_id == answer.session_id
        for each in (search, answer):
            assert each.request.model == "gpt-3.5-turbo"
            assert each.golden.model == "gpt-3.5-turbo-0125"
            assert [t.name for t in each.request.tools or []] == [SEARCH]
            assert each.request.messages[0].text() == "You are a helpful assistant"
            assert each.request.messages[1].text() == "What is OpenLLMetry?"
            assert each.notes[0].startswith("production streamed this answer")
        assert search.golden.message.tool_calls == [
            ToolCall(id=call_id, name=SEARCH, arguments={"query": "OpenLLMetry"})
        ]
        assert search.golden.finish_reason == "tool_calls"
        assert [m.role for m in answer.request.messages] == ["system", "user", "assistant", "tool"]
        assert answer.request.messages[3].tool_call_id == call_id
        assert answer.request.messages[3].text().startswith('[{"title": "What is OpenLLMetry?')
        assert answer.golden.message.tool_calls is None
        assert answer.golden.message.text().startswith("OpenLLMetry is an open")
        assert answer.golden.finish_reason == "stop"


def test_the_langchain_runs_other_traffic_is_skipped_by_reason() -> None:
    stream = SessionStream([LANGCHAIN], ReadOptions())
    list(stream)
    skips = stream.summaries[0].skips
    assert dict(skips.counts) == {"not_chat_completion": 12}  # LangSmith ×8, search ×4
    assert {example.detail for example in skips.examples} >= {"GET /info", "POST /search"}


def test_the_agents_sdk_run_is_one_conversation_over_the_responses_api() -> None:
    search, answer = units_of(AGENTS_SDK)
    assert search.session_id == answer.session_id
    for each in (search, answer):
        assert each.request.model == "gpt-4.1"
        assert each.request.messages[0].role == "system"
        assert each.request.messages[0].text() == WEATHER_INSTRUCTIONS
        assert [t.name for t in each.request.tools or []] == ["get_weather"]
        assert each.notes == []
    call = ToolCall(
        id="call_B8tgP9l0UOJj9DF47eAb54Om", name="get_weather", arguments={"city": "London"}
    )
    assert search.golden.message.tool_calls == [call]
    assert [m.role for m in answer.request.messages] == ["system", "user", "assistant", "tool"]
    assert answer.request.messages[2].tool_calls == [call]
    assert answer.request.messages[3].text() == "It's cloudy with 15°C"
    assert answer.golden.message.text() == (
        "The weather in London is currently cloudy with a temperature of 15°C."
    )
    assert answer.golden.usage is not None and answer.golden.usage.input_tokens == 101


def test_a_tool_calling_langchain_agent_streams_its_call_then_its_answer() -> None:
    call, answer = units_of(LANGCHAIN_TOOL_AGENT)
    assert call.session_id == answer.session_id
    for each in (call, answer):
        assert each.request.model == "gpt-4o-mini"
        assert each.request.params == {"n": 1, "temperature": 0.0}
        assert [t.name for t in each.request.tools or []] == ["get_weather"]
        assert [m.text() for m in each.request.messages[:2]] == [
            "You are a helpful assistant.",
            "What's the weather in London?",
        ]
        assert each.golden.usage is None  # the stream was not asked for usage
        assert each.notes[0].startswith("production streamed this answer")
    weather = ToolCall(
        id="call_7p1vRWhZc9Pm0j6JVvrHK4ZE", name="get_weather", arguments={"location": "London"}
    )
    # '{"' 'location' '":"' 'London' '"}' in five fragments of one call at index 0.
    assert call.golden.message.tool_calls == [weather]
    assert call.golden.finish_reason == "tool_calls"
    assert answer.request.messages[2].tool_calls == [weather]
    assert answer.request.messages[3].tool_call_id == weather.id
    assert answer.request.messages[3].text() == "The weather in London is sunny."
    # "The" " weather" " in" " London" " is" " sunny" ".": the tool's words, repeated.
    assert answer.golden.message.text() == "The weather in London is sunny."
    assert answer.golden.finish_reason == "stop"


def test_an_agents_sdk_run_with_instructions_and_a_function_tool() -> None:
    add, answer = units_of(ADDITION_AGENT)
    assert add.session_id == answer.session_id
    instructions = "You are a helpful assistant specialized in addition calculations."
    for each in (add, answer):
        assert each.request.model == "gpt-4o"
        assert each.request.messages[0].role == "system"
        assert each.request.messages[0].text() == instructions
        assert [t.name for t in each.request.tools or []] == ["add"]
    call = ToolCall(id="call_xHztRD2un5qUnUzaZ2Dw5xAh", name="add", arguments={"a": 1, "b": 2})
    assert add.golden.message.tool_calls == [call]
    assert add.golden.usage is not None
    assert (add.golden.usage.input_tokens, add.golden.usage.output_tokens) == (289, 18)
    assert [m.role for m in answer.request.messages] == ["system", "user", "assistant", "tool"]
    assert answer.request.messages[3].text() == "3"
    assert answer.golden.message.text() == "The sum of 1 and 2 is 3."
    assert answer.golden.usage is not None and answer.golden.usage.total_tokens == 326


def test_an_agents_sdk_run_that_streams_its_answer() -> None:
    (found,) = units_of(STREAMED_AGENT)
    assert [m.text() for m in found.request.messages] == [
        "You are a helpful assistant who answers questions concisely and accurately.",
        "What is the capital of France?",
    ]
    # "The" " capital" " of" " France" " is" " Paris" "."; usage from response.completed.
    assert found.golden.message.text() == "The capital of France is Paris."
    assert found.golden.usage is not None
    assert (found.golden.usage.input_tokens, found.golden.usage.output_tokens) == (50, 8)
    assert found.notes[0].startswith("production streamed this answer")
    assert "stream" not in found.request.params


def test_an_agents_sdk_handoff_is_answered_by_the_second_agent() -> None:
    first, second = units_of(HANDOFF_AGENT)
    assert [t.name for t in first.request.tools or []] == ["random_number", "transfer_to_agent2"]
    assert [(c.name, c.arguments) for c in first.golden.message.tool_calls or []] == [
        ("random_number", {}),
        ("transfer_to_agent2", {}),
    ]
    # agent2 has its own instructions and no tools; it sees the whole run so far.
    assert second.request.messages[0].role == "system"
    assert second.request.messages[0].text() == "Return double the number"
    assert second.request.tools == []
    assert [m.text() for m in second.request.messages if m.role == "tool"] == [
        "4",
        "{'assistant': 'agent2'}",
    ]
    assert second.golden.message.text() == (
        "The random number generated is 4, and it's been handed off to agent2."
    )


def test_every_agent_cassette_is_named_in_the_provenance() -> None:
    provenance = (AGENTS / "PROVENANCE.md").read_text()
    for sample in SAMPLES:
        assert sample.name in provenance


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: path.stem)
def test_every_agent_unit_replays_against_a_strict_server(sample: Path) -> None:
    found = units_of(sample)
    assert_replayable(found)
