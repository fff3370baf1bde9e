"""Cassettes recorded around whole agent runs: a LangChain agent that streams chat completions,
and an OpenAI Agents SDK run over the Responses API. Every model call becomes its unit; the
other HTTP traffic of the run (LangSmith, a search API, trace ingestion) is skipped by reason.

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


@pytest.mark.parametrize("sample", [LANGCHAIN, AGENTS_SDK], ids=lambda path: path.stem)
def test_every_agent_unit_replays_against_a_strict_server(sample: Path) -> None:
    found = units_of(sample)
    assert_replayable(found)
