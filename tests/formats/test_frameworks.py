"""The conformance corpus: real traces of agent frameworks read into exactly their steps.

Every sample under ``tests/fixtures/frameworks/`` (see its PROVENANCE.md) has an expected-units
file checked by hand against the trace: for each unit the model, system prompt, user turns, tool
calls and results of the history, tools offered, usage and answer, and the LLM steps the readers
could not use, by the reason that blocks them. Each unit is also replayed against a strict
OpenAI-compatible server that refuses what hosted APIs refuse.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_backtest.api import ReadingOptions
from agent_backtest.formats import ReadOptions, SessionStream
from agent_backtest.providers import CallPolicy, ModelClient, ProviderSettings
from agent_backtest.providers.openai import OpenAIProvider
from agent_backtest.units import AgentConfig
from agent_backtest.units.source import UnitSource
from tests.fake_openai import FakeOpenAI
from tests.formats.conformance import read_sample
from tests.formats.otlp_sources import SOURCES, build

CORPUS = Path(__file__).parents[1] / "fixtures" / "frameworks"
SAMPLES = sorted(CORPUS.glob("*/*.trace.json"))


def span_ids(sample: Path) -> list[str]:
    """The id of every span or observation in a sample."""
    document = json.loads(sample.read_text())
    if "observations" in document:
        return [observation["id"] for observation in document["observations"]]
    return [
        span["spanId"]
        for resource in document["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


def test_the_otlp_samples_are_their_sources_converted() -> None:
    for source in sorted(SOURCES.glob("*.source.json")):
        trace = source.with_name(source.name.replace(".source.json", ".trace.json"))
        assert json.loads(trace.read_text()) == build(source), source.name


def expected_file(sample: Path) -> Path:
    return sample.with_name(sample.name.replace(".trace.json", ".expected.json"))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: path.name.split(".")[0])
def test_each_sample_yields_exactly_its_expected_units(sample: Path) -> None:
    expected = json.loads(expected_file(sample).read_text())
    assert read_sample(sample) == expected


def test_every_sample_has_an_expected_file_and_a_provenance_note() -> None:
    assert SAMPLES
    for sample in SAMPLES:
        assert expected_file(sample).exists(), sample
        assert sample.name in (sample.parent / "PROVENANCE.md").read_text(), sample


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: path.name.split(".")[0])
def test_every_unit_replays_against_a_strict_server(sample: Path) -> None:
    units = list(UnitSource([sample], ReadingOptions().read_options(), AgentConfig()))
    if not units:
        pytest.skip("the sample gives no unit (its expected file says why)")
    with FakeOpenAI(strict=True) as server:
        settings = ProviderSettings(type="openai", base_url=server.base_url)
        policy = CallPolicy(timeout=5.0, max_retries=0, backoff_initial=0.0)

        async def send_all() -> list[object]:
            client = ModelClient(OpenAIProvider("openai", settings, "sk-test"), policy)
            try:
                return [await client.generate(u.request, "gpt-4o", 0) for u in units]
            finally:
                await client.provider.aclose()

        outcomes = asyncio.run(send_all())
    assert server.refusals == []
    assert len(outcomes) == len(units)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: path.name.split(".")[0])
def test_every_observation_is_accounted_for(sample: Path) -> None:
    stream = SessionStream([sample], ReadOptions(explain=True))
    list(stream)
    readings = stream.summaries[0].skips.readings or []
    assert sorted(r.span_id for r in readings) == sorted(span_ids(sample))
    for reading in readings:
        if reading.kind == "llm":
            assert reading.dialect is not None
