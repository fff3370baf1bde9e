"""``abt pull phoenix`` and ``abt push --to phoenix`` against a real Phoenix server: spans sent
by the OpenTelemetry SDK come back as the same units, and a scored replay of them lands as one
annotation per unit on the right spans, however often it is pushed."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.backends.conftest import PhoenixServer
from tests.backends.exchange import record_exchange, units_of, write_sdk_file
from tests.conftest import FIXTURES
from tests.optional import unavailable

pytestmark = pytest.mark.long

if importlib.util.find_spec("phoenix") is None:  # found, not imported: the server runs apart
    unavailable("phoenix is not installed: pip install 'agent-backtest[phoenix]'")

PROJECT = "weather"
SPANS = 12
ABT = (sys.executable, "-m", "agent_backtest.cli")
SECRET = "px-test-SECRETSECRET0123456789"


def abt(cwd: Path, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ABT, *map(str, args)],
        cwd=cwd,
        env={**os.environ, "PHOENIX_API_KEY": SECRET},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def sent(phoenix: PhoenixServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The exchange exported to Phoenix by the SDK; the SDK's own encoding of it, written."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    print(f"phoenix started in {phoenix.start_seconds:.1f} s")
    provider = TracerProvider(resource=Resource.create({"openinference.project.name": PROJECT}))
    kept = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(kept))
    exporter = OTLPSpanExporter(endpoint=f"{phoenix.url}/v1/traces")
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    record_exchange(provider.get_tracer("weather-test"))
    provider.shutdown()
    _wait_for_spans(phoenix.url, SPANS)
    return write_sdk_file(kept.get_finished_spans(), tmp_path_factory.mktemp("sdk") / "sdk.json")


def _wait_for_spans(url: str, count: int) -> None:
    """Phoenix stores what it receives in the background: wait until it lists ``count``."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        answer = httpx.get(f"{url}/v1/projects/{PROJECT}/spans", params={"limit": 1000})
        if answer.status_code == 200 and len(answer.json()["data"]) >= count:
            return
        time.sleep(0.2)
    raise AssertionError(f"phoenix never listed {count} spans")


def test_pulled_spans_give_the_units_of_the_spans_sent(
    phoenix: PhoenixServer, sent: Path, tmp_path: Path
) -> None:
    result = abt(
        tmp_path, "pull", "phoenix", "--endpoint", phoenix.url, "--project", PROJECT,
        "-o", "traces.jsonl", "--page-size", "4",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"wrote {SPANS} spans to traces.jsonl (complete)\n"
    pulled = tmp_path / "traces.jsonl"
    assert len(pulled.read_text().splitlines()) == 3  # pages of 4 spans
    state = json.loads((tmp_path / "traces.jsonl.pull.json").read_text())
    assert state["complete"] and state["records"] == SPANS
    assert SECRET not in pulled.read_text() + result.stdout + result.stderr
    units = units_of(pulled)
    assert len(units) == 6
    assert units == units_of(sent)


def test_a_replay_of_a_phoenix_project_pulls_it_first(
    phoenix: PhoenixServer, sent: Path, tmp_path: Path
) -> None:
    address = phoenix.url.removeprefix("http://")
    replay = abt(tmp_path, "replay", f"phoenix://{address}/{PROJECT}", "--model", "mock/golden",
                 "--out", "runs/pulled", "--no-cache")  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    pulled = tmp_path / "runs" / "pulled.phoenix.jsonl"
    assert units_of(pulled) == units_of(sent)
    manifest = json.loads((tmp_path / "runs" / "pulled" / "run.json").read_text())
    assert [Path(i["path"]).name for i in manifest["inputs"]] == ["pulled.phoenix.jsonl"]
    assert manifest["units"] == 6 and manifest["status"] == "completed"


def test_an_interrupted_pull_resumes_without_writing_a_span_twice(
    phoenix: PhoenixServer, sent: Path, tmp_path: Path
) -> None:
    command = [*ABT, "pull", "phoenix", "--endpoint", phoenix.url, "--project", PROJECT]
    command += ["-o", "traces.jsonl", "--page-size", "2", "--requests-per-second", "4"]
    slow = subprocess.Popen(command, cwd=tmp_path, stderr=subprocess.DEVNULL)
    state = tmp_path / "traces.jsonl.pull.json"
    while slow.poll() is None:
        if state.exists() and json.loads(state.read_text())["records"] >= 4:
            slow.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    slow.wait()
    assert slow.returncode == -signal.SIGKILL, "the pull ended before it was stopped"
    done = abt(tmp_path, *command[3:])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {SPANS} spans to traces.jsonl (resumed, added ")
    span_ids = [
        span["spanId"]
        for line in (tmp_path / "traces.jsonl").read_text().splitlines()
        for span in json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    ]
    assert len(span_ids) == len(set(span_ids)) == SPANS
    assert units_of(tmp_path / "traces.jsonl") == units_of(sent)


def test_a_scored_replay_is_one_annotation_per_unit_however_often_pushed(
    phoenix: PhoenixServer, sent: Path, tmp_path: Path
) -> None:
    pull = abt(tmp_path, "pull", "phoenix", "--endpoint", phoenix.url, "--project", PROJECT,
               "-o", "traces.jsonl")  # fmt: skip
    assert pull.returncode == 0, pull.stderr
    replay = abt(tmp_path, "replay", "traces.jsonl", "--model", "mock/golden", "--out", "run",
                 "--no-cache")  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    units = [json.loads(line) for line in (tmp_path / "run" / "units.jsonl").open()]
    push = ["push", "run", "--to", "phoenix", "--endpoint", phoenix.url]
    first = abt(tmp_path, *push)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "wrote 6 abt.agreement annotations for run run\n"
    annotations = _annotations(phoenix.url, [unit["step_id"] for unit in units])
    assert len(annotations) == len(units) == 6
    by_span = {annotation["span_id"]: annotation for annotation in annotations}
    for unit in units:
        annotation = by_span[unit["step_id"]]
        assert annotation["result"]["label"] in ("match", "text_match")
        assert annotation["result"]["score"] == 1.0
        assert annotation["metadata"]["unit_id"] == unit["unit_id"]
        assert annotation["metadata"]["candidate_model"] == "mock/golden"
        assert annotation["metadata"]["run_id"] == "run"
        called = unit["golden"]["message"].get("tool_calls")
        assert ("get_weather(" in annotation["result"]["explanation"]) == bool(called)
    again = abt(tmp_path, *push)
    assert again.returncode == 0, again.stderr
    after = _annotations(phoenix.url, list(by_span))
    assert sorted(a["id"] for a in after) == sorted(a["id"] for a in annotations)  # updated


def test_a_run_whose_spans_phoenix_does_not_hold_is_one_line(
    phoenix: PhoenixServer, tmp_path: Path
) -> None:
    elsewhere = FIXTURES / "otlp" / "openinference.jsonl"  # spans never sent to this Phoenix
    replay = abt(tmp_path, "replay", elsewhere, "--model", "mock/golden", "--out", "run",
                 "--no-cache")  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    result = abt(tmp_path, "push", "run", "--to", "phoenix", "--endpoint", phoenix.url)
    assert result.returncode == 2
    assert result.stderr.startswith(
        f"abt: error: --endpoint: Phoenix at {phoenix.url} does not hold the run's production "
        "spans (2 missing, such as "
    )
    assert result.stderr.endswith("push to the Phoenix the traces were pulled from\n")
    not_a_run = abt(tmp_path, "push", ".", "--to", "phoenix", "--endpoint", phoenix.url)
    assert not_a_run.returncode == 2
    assert not_a_run.stderr == "abt: error: .: is not a run directory (no run.json)\n"


def _annotations(url: str, span_ids: Sequence[str]) -> list[dict[str, Any]]:
    answer = httpx.get(
        f"{url}/v1/projects/{PROJECT}/span_annotations",
        params={"span_ids": list(span_ids), "limit": 1000},
    )
    answer.raise_for_status()
    return [a for a in answer.json()["data"] if a["name"] == "abt.agreement"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ("--project", "nowhere"),
            "abt: error: --project: Phoenix at {url} has no project 'nowhere'",
        ),
        (
            ("--project", PROJECT, "--endpoint", "http://127.0.0.1:9"),
            "abt: error: --endpoint: cannot reach Phoenix at http://127.0.0.1:9 (ConnectError): "
            "is it running, and is the URL right?",
        ),
    ],
)
def test_a_wrong_project_or_endpoint_is_one_line(
    phoenix: PhoenixServer, tmp_path: Path, flags: tuple[str, ...], message: str
) -> None:
    result = abt(
        tmp_path, "pull", "phoenix", "--endpoint", phoenix.url, *flags, "-o", "traces.jsonl"
    )
    assert result.returncode == 2
    assert result.stderr.startswith(message.format(url=phoenix.url))
    assert len(result.stderr.splitlines()) == 1 and SECRET not in result.stderr
