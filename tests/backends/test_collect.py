"""``abt collect`` as a real process, fed by the real OpenTelemetry SDK and its OTLP/HTTP
exporter: what it writes gives the same units as the SDK's own encoding of the same spans."""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.backends.exchange import record_exchange, units_of, write_sdk_file
from tests.optional import require

require(
    "opentelemetry.exporter.otlp.proto.http",
    "pip install opentelemetry-exporter-otlp-proto-http (the test extra)",
)

STOP_SECONDS = 30
ABT = (sys.executable, "-m", "agent_backtest.cli")


class Collector:
    """A running ``abt collect`` and the URL it listens on."""

    def __init__(self, cwd: Path, *extra: str) -> None:
        self.out = cwd / "traces.jsonl"
        self.process = subprocess.Popen(
            [*ABT, "collect", "--listen", "127.0.0.1:0", "--out", str(self.out), *extra],
            cwd=cwd,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stderr is not None
        first = self.process.stderr.readline()
        assert "listening on " in first, first
        self.url = first.split("listening on ")[1].split(",")[0]

    def stop(self, number: signal.Signals = signal.SIGTERM) -> str:
        """Send ``number``; the rest of stderr once the process ended with 0."""
        self.process.send_signal(number)
        _, rest = self.process.communicate(timeout=STOP_SECONDS)
        assert self.process.returncode == 0, rest
        return rest


def abt_units(traces: Path, out: Path) -> list[dict[str, object]]:
    """``abt units`` of a trace file, by unit id, without the file each unit was read from."""
    subprocess.run([*ABT, "units", str(traces), "-o", str(out)], check=True, capture_output=True)
    units = [json.loads(line) for line in out.read_text().splitlines()]
    for unit in units:
        unit.pop("source", None)
    return sorted(units, key=lambda unit: str(unit["unit_id"]))


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[Collector]:
    running = Collector(tmp_path)
    yield running
    if running.process.poll() is None:
        running.process.kill()
        running.process.wait()


def test_the_sdk_exporter_gives_the_units_of_its_own_encoding(
    collector: Collector, tmp_path: Path
) -> None:
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    kept = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(kept))
    exporter = OTLPSpanExporter(endpoint=collector.url, compression=Compression.Gzip)
    provider.add_span_processor(BatchSpanProcessor(exporter, max_export_batch_size=5))
    record_exchange(provider.get_tracer("weather-test"))
    assert provider.force_flush()
    provider.shutdown()
    summary = collector.stop()

    spans = kept.get_finished_spans()
    assert f"wrote {len(spans)} spans from " in summary
    lines = collector.out.read_bytes().splitlines()
    assert len(lines) >= 3  # batches of at most 5 of the 15 spans: one line per request
    assert stat.S_IMODE(os.stat(collector.out).st_mode) == 0o600
    sdk_file = write_sdk_file(spans, tmp_path / "sdk.json")
    received = abt_units(collector.out, tmp_path / "received.units.jsonl")
    assert len(received) == 6  # two model calls in each of three sessions
    assert received == abt_units(sdk_file, tmp_path / "sdk.units.jsonl")


def test_json_bodies_gzip_or_not_are_written_as_they_came(
    collector: Collector, tmp_path: Path
) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    kept = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(kept))
    record_exchange(provider.get_tracer("weather-test"), sessions=1)
    sdk_file = write_sdk_file(kept.get_finished_spans(), tmp_path / "sdk.json")
    body = json.loads(sdk_file.read_text())
    headers = {"Content-Type": "application/json"}
    plain = httpx.post(collector.url, json=body)
    packed = httpx.post(
        collector.url,
        content=gzip.compress(json.dumps(body).encode()),
        headers={**headers, "Content-Encoding": "gzip"},
    )
    assert (plain.status_code, plain.json()) == (200, {})
    assert (packed.status_code, packed.json()) == (200, {})
    collector.stop()
    assert [json.loads(line) for line in collector.out.read_text().splitlines()] == [body, body]
    assert len(units_of(collector.out)) == 2  # the same spans twice: read once


def test_requests_over_the_limit_or_unreadable_are_refused(tmp_path: Path) -> None:
    protobuf = {"Content-Type": "application/x-protobuf"}
    json_body = {"Content-Type": "application/json"}
    bomb = gzip.compress(b"\0" * 100_000)  # small on the wire, 100 kB once inflated
    assert len(bomb) < 4096
    requests = [
        ("", b"x" * 5000, protobuf),
        ("", bomb, {**protobuf, "Content-Encoding": "gzip"}),
        ("", b"\xff\xff\xff", protobuf),
        ("", b"{}", {"Content-Type": "text/plain"}),
        ("x", b"{}", protobuf),
        ("", b'{"resourceSpans": 3}', json_body),
        ("", b"", protobuf),  # a valid request without spans: accepted, nothing written
    ]
    collector = Collector(tmp_path, "--max-request-bytes", "4096")
    try:
        statuses = [
            httpx.post(collector.url + suffix, content=body, headers=headers).status_code
            for suffix, body, headers in requests
        ]
        summary = collector.stop()
    finally:
        collector.process.kill()
    assert statuses == [413, 413, 400, 415, 404, 400, 200]
    assert summary == (
        f"abt collect: stopped; wrote 0 spans from 1 requests to {collector.out}; refused 2 "
        "with 400, 1 with 404, 2 with 413, 1 with 415\n"
    )
    assert collector.out.read_bytes() == b""


def test_a_stop_while_exporters_send_leaves_only_whole_lines(
    collector: Collector, tmp_path: Path
) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    kept = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(kept))
    record_exchange(provider.get_tracer("weather-test"))
    body = write_sdk_file(kept.get_finished_spans(), tmp_path / "sdk.json").read_bytes() * 40
    body = (
        b'{"resourceSpans": ['
        + b",".join(
            json.dumps(json.loads(line)["resourceSpans"][0]).encode() for line in body.splitlines()
        )
        + b"]}"
    )
    sent: list[int] = []
    done = threading.Event()

    def send() -> None:
        with httpx.Client() as client:
            while not done.is_set():
                try:
                    reply = client.post(
                        collector.url, content=body, headers={"Content-Type": "application/json"}
                    )
                except httpx.TransportError:
                    return
                sent.append(reply.status_code)

    senders = [threading.Thread(target=send) for _ in range(3)]
    for sender in senders:
        sender.start()
    while len(sent) < 20:
        threading.Event().wait(0.01)
    collector.stop(signal.SIGINT)
    done.set()
    for sender in senders:
        sender.join()
    lines = collector.out.read_bytes().split(b"\n")
    assert lines[-1] == b""  # the file ends on a newline
    assert all(json.loads(line) == json.loads(body) for line in lines[:-1])
    assert len(lines) - 1 >= sent.count(200)


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [*ABT, "collect", "--listen", f"127.0.0.1:{port}", "--out", "traces.jsonl"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2
    assert result.stderr == (
        f"abt: error: --listen: 127.0.0.1:{port} is in use: stop what listens there or "
        "choose another port\n"
    )
    assert not (tmp_path / "traces.jsonl").exists()
