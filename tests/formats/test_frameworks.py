"""The conformance corpus: real traces of agent frameworks read into exactly their steps.

Every sample under ``tests/fixtures/frameworks/`` (see its PROVENANCE.md) has an expected-units
file checked by hand against the trace: for each unit the model, system prompt, user turns, tool
calls and results of the history, tools offered, usage and answer, and the LLM steps the readers
could not use, by the reason that blocks them. Each unit is also replayed against a strict
OpenAI-compatible server that refuses what hosted APIs refuse.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_backtest.formats import ReadOptions, SessionStream
from tests.formats.conformance import assert_replayable, read_sample, units_of
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
    units = units_of(sample)
    if not units:
        pytest.skip("the sample gives no unit (its expected file says why)")
    assert_replayable(units)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: path.name.split(".")[0])
def test_every_observation_is_accounted_for(sample: Path) -> None:
    stream = SessionStream([sample], ReadOptions(explain=True))
    list(stream)
    readings = stream.summaries[0].skips.readings or []
    assert sorted(r.span_id for r in readings) == sorted(span_ids(sample))
    for reading in readings:
        if reading.kind == "llm":
            assert reading.dialect is not None
