"""``abt push RUN --to otlp``: a replay of spans recorded by the real OpenTelemetry SDK, sent as
GenAI spans to a running ``abt collect``, and read back: one span per replayed call, in
production's trace under production's span, whose request and answer read back as the units
replayed and the candidate's answers."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.backends.exchange import record_exchange, units_of, write_sdk_file
from tests.backends.test_collect import ABT, Collector
from tests.optional import require

require("opentelemetry.sdk", "pip install opentelemetry-sdk (the test extra)")


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[Collector]:
    folder = tmp_path / "collector"
    folder.mkdir()
    running = Collector(folder)
    yield running
    if running.process.poll() is None:
        running.process.kill()
        running.process.wait()


def abt(cwd: Path, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ABT, *(str(arg) for arg in args)], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def recorded(path: Path) -> Path:
    """The scripted weather exchange as the SDK's own OTLP encoding writes it."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    kept = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(kept))
    record_exchange(provider.get_tracer("weather-test"))
    provider.shutdown()
    return write_sdk_file(kept.get_finished_spans(), path)


def received_spans(path: Path) -> list[dict[str, Any]]:
    """Every span in a collector's file, with its attributes as a plain dict."""
    spans = []
    for line in path.read_text().splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    values = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
                    spans.append({**span, "attributes": values})
    return spans


def test_a_replay_is_sent_as_one_genai_span_per_call_beside_production(
    collector: Collector, tmp_path: Path
) -> None:
    traces = recorded(tmp_path / "production.json")
    replay = abt(tmp_path, "replay", traces, "--model", "mock/golden", "--out", "run",
                 "--no-cache", "--k", "2")  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    units = [json.loads(line) for line in (tmp_path / "run" / "units.jsonl").open()]
    assert len(units) == 6 and all(len(unit["trace_id"]) == 32 for unit in units)

    push = abt(tmp_path, "push", "run", "--to", "otlp", "--endpoint", collector.url)
    assert push.returncode == 0, push.stderr
    assert push.stdout == (
        f"sent 12 spans of run run to {collector.url} (12 beside their production span)\n"
    )
    collector.stop()

    spans = received_spans(collector.out)
    assert len(spans) == 12  # six units, two repeats
    by_unit = {unit["unit_id"]: unit for unit in units}
    for span in spans:
        unit = by_unit[span["attributes"]["abt.unit.id"]]
        assert span["traceId"] == unit["trace_id"]
        assert span["parentSpanId"] == unit["step_id"]
        assert span["links"] == [{"traceId": unit["trace_id"], "spanId": unit["step_id"]}]
        assert span["name"] == "chat golden"
        attributes = span["attributes"]
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.provider.name"] == "mock"
        assert attributes["abt.score.bucket"] in ("match", "text_match")
        assert attributes["abt.run.id"] == "run"
    assert len({span["spanId"] for span in spans}) == 12

    # read back, each span is a unit: the request replayed, and the candidate's answer
    replayed, production_units = units_of(collector.out), units_of(traces)
    assert len(replayed) == 12
    for unit in replayed:
        production = next(u for u in production_units if u["trace_id"] == unit["trace_id"]
                          and u["request"]["messages"] == unit["request"]["messages"])  # fmt: skip
        assert unit["request"]["tools"] == production["request"]["tools"]
        sent = dict(unit["request"]["params"])
        assert sent.pop("seed") in (0, 1)  # the seed of each repeat, as the call was sent
        assert sent == production["request"]["params"]
        # mock/golden answers with production's own message
        assert unit["golden"]["message"] == production["golden"]["message"]
        assert unit["request"]["model"] == "golden"


def test_a_second_push_sends_the_same_span_ids(collector: Collector, tmp_path: Path) -> None:
    traces = recorded(tmp_path / "production.json")
    assert abt(tmp_path, "replay", traces, "--model", "mock/golden", "--out", "run",
               "--no-cache").returncode == 0  # fmt: skip
    for _ in range(2):
        push = abt(tmp_path, "push", "run", "--to", "otlp", "--endpoint", collector.url)
        assert push.returncode == 0, push.stderr
    collector.stop()
    lines = collector.out.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0]) == json.loads(lines[1])


def test_a_wrong_endpoint_is_one_line(tmp_path: Path) -> None:
    traces = recorded(tmp_path / "production.json")
    assert abt(tmp_path, "replay", traces, "--model", "mock/golden", "--out", "run",
               "--no-cache").returncode == 0  # fmt: skip
    result = abt(tmp_path, "push", "run", "--to", "otlp", "--endpoint", "ftp://nowhere")
    assert result.returncode == 2
    assert result.stderr.startswith("abt: error: --endpoint: 'ftp://nowhere' is not an http")
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("to", ["otlp", "phoenix"])
def test_a_simulate_run_is_refused_with_why(tmp_path: Path, to: str) -> None:
    run = tmp_path / "sim"
    run.mkdir()
    fixture = Path(__file__).parents[1] / "fixtures" / "runs_before_kind" / "simulate.json"
    (run / "run.json").write_bytes(fixture.read_bytes())
    result = abt(tmp_path, "push", "sim", "--to", to, "--endpoint", "http://127.0.0.1:9")
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        f"abt: error: sim is a simulate run: push --to {to} sends a replay run, whose units "
        "came from production spans (a simulate run plays its own conversations)\n"
    )


def test_only_spans_put_beside_production_are_counted_so(
    collector: Collector, tmp_path: Path
) -> None:
    # a trace id another backend gave (not OTLP's 32 hex digits) cannot parent a span
    traces = recorded(tmp_path / "production.json")
    assert abt(tmp_path, "replay", traces, "--model", "mock/golden", "--out", "run",
               "--no-cache").returncode == 0  # fmt: skip
    units_file = tmp_path / "run" / "units.jsonl"
    units = [json.loads(line) for line in units_file.open()]
    units_file.write_text("".join(json.dumps({**u, "trace_id": "trace-1"}) + "\n" for u in units))
    push = abt(tmp_path, "push", "run", "--to", "otlp", "--endpoint", collector.url)
    assert push.returncode == 0, push.stderr
    assert push.stdout.endswith("(0 beside their production span)\n")
    collector.stop()
    assert all("parentSpanId" not in span for span in received_spans(collector.out))
