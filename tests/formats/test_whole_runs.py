"""Whole-run recordings (evaluation logs, benchmark results) read into exactly their calls.

Every recording under ``tests/fixtures/frameworks/<format>/`` (see each folder's PROVENANCE.md)
has an expected-units file written from the recording by hand: one unit per recorded model call,
with its history, tools, usage and answer. Each unit is replayed against the strict
OpenAI-compatible server, and ``--explain`` accounts for every recorded call and tool run.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.formats import ReadOptions, SessionStream
from agent_backtest.formats.base import SpanReading
from agent_backtest.formats.registry import detect
from tests.formats.conformance import assert_replayable, read_sample, units_of

CORPUS = Path(__file__).parents[1] / "fixtures" / "frameworks"
FORMATS = {
    "inspect": "inspect",
    "tau2": "tau2_bench",
    "swe_agent": "swe_agent",
    "openhands": "openhands",
}
# Long recordings whose rebuilt histories would make an expected file of megabytes: their own
# tests check each unit against the recorded call instead.
CHECKED_CALL_BY_CALL = {
    CORPUS / "openhands" / "llama-4-maverick-multi-swe-bench.jsonl",
}
RECORDINGS = sorted(
    path
    for folder in FORMATS
    for path in (CORPUS / folder).iterdir()
    if path.suffix in (".eval", ".json", ".jsonl", ".traj")
    and not path.name.endswith(".expected.json")
    and path not in CHECKED_CALL_BY_CALL
)


def readings_of(recording: Path) -> list[SpanReading]:
    """How ``--explain`` accounts for each model call and tool run of a recording."""
    stream = SessionStream([recording], ReadOptions(explain=True))
    list(stream)
    return stream.summaries[0].skips.readings or []


def expected_file(recording: Path) -> Path:
    return recording.with_name(recording.stem + ".expected.json")


def name(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


@pytest.mark.parametrize("recording", RECORDINGS, ids=name)
def test_each_recording_is_detected_by_its_content(recording: Path) -> None:
    assert detect(recording).FORMAT == FORMATS[recording.parent.name]


@pytest.mark.parametrize("recording", RECORDINGS, ids=name)
def test_each_recording_yields_exactly_its_expected_units(recording: Path) -> None:
    expected = json.loads(expected_file(recording).read_text())
    assert read_sample(recording) == expected


def test_every_recording_has_an_expected_file_and_a_provenance_note() -> None:
    for folder in FORMATS:
        assert len([r for r in RECORDINGS if r.parent.name == folder]) >= 2, folder
    for recording in RECORDINGS:
        assert expected_file(recording).exists(), recording
        assert recording.name in (recording.parent / "PROVENANCE.md").read_text(), recording


@pytest.mark.parametrize("recording", RECORDINGS, ids=name)
def test_every_unit_replays_against_a_strict_server(recording: Path) -> None:
    units = units_of(recording)
    assert units
    assert_replayable(units)


def inspect_events(recording: Path) -> list[dict[str, Any]]:
    """Every event of an Inspect log, nested ones included, read straight from the file."""
    if recording.suffix == ".eval":
        with zipfile.ZipFile(recording) as archive:
            samples = [
                json.loads(archive.read(member))
                for member in archive.namelist()
                if member.startswith("samples/")
            ]
    else:
        samples = json.loads(recording.read_text())["samples"]
    events: list[dict[str, Any]] = []
    pending = [
        event
        for sample in samples
        for event in sample.get("events") or sample["transcript"]["events"]
    ]
    while pending:
        event = pending.pop()
        events.append(event)
        pending.extend(event.get("events") or [])
    return events


@pytest.mark.parametrize(
    "recording", [r for r in RECORDINGS if r.parent.name == "inspect"], ids=name
)
def test_explain_accounts_for_every_model_and_tool_event(recording: Path) -> None:
    readings = readings_of(recording)
    events = inspect_events(recording)
    for kind in ("model", "tool"):
        recorded = [e for e in events if e["event"] == kind]
        read = [r for r in readings if r.kind == ("llm" if kind == "model" else "tool")]
        assert len(read) == len(recorded), kind
    assert all(r.dialect == "inspect" for r in readings)


def test_a_log_without_model_events_says_so(tmp_path: Path) -> None:
    log = json.loads((CORPUS / "inspect" / "transcript-ollama-0.3.41.json").read_text())
    log["samples"][0].pop("transcript")
    path = tmp_path / "messages_only.json"
    path.write_text(json.dumps(log))
    stream = SessionStream([path], ReadOptions())
    sessions = list(stream)
    assert len(sessions) == 1 and not list(sessions[0].steps())
    assert stream.summaries[0].skips.counts == {"no_model_events": 1}


@pytest.mark.parametrize("transcript", [0, 7, "events", ["x"], True])
def test_a_transcript_not_an_object_is_read_as_none(tmp_path: Path, transcript: Any) -> None:
    log = json.loads((CORPUS / "inspect" / "transcript-ollama-0.3.41.json").read_text())
    log["samples"][0]["transcript"] = transcript
    path = tmp_path / "odd_transcript.json"
    path.write_text(json.dumps(log))
    stream = SessionStream([path], ReadOptions())
    sessions = list(stream)
    assert len(sessions) == 1 and not list(sessions[0].steps())
    assert stream.summaries[0].skips.counts == {"no_model_events": 1}


def test_units_on_an_eval_archive_gives_one_unit_per_model_event(tmp_path: Path) -> None:
    recording = CORPUS / "inspect" / "message-pool-tools-0.3.135.eval"
    out = tmp_path / "units.jsonl"
    result = CliRunner().invoke(app, ["units", str(recording), "-o", str(out)])
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert len(lines) == len([e for e in inspect_events(recording) if e["event"] == "model"])


@pytest.mark.parametrize("recording", [r for r in RECORDINGS if r.parent.name == "tau2"], ids=name)
def test_explain_accounts_for_every_agent_call_and_tool_run(recording: Path) -> None:
    readings = readings_of(recording)
    messages = [m for s in json.loads(recording.read_text())["simulations"] for m in s["messages"]]
    calls = [m for m in messages if m["role"] == "assistant" and m.get("raw_data") is not None]
    runs = [m for m in messages if m["role"] == "tool" and m.get("requestor") == "assistant"]
    assert len([r for r in readings if r.kind == "llm"]) == len(calls)
    assert len([r for r in readings if r.kind == "tool"]) == len(runs)


def test_the_simulated_users_own_tool_calls_stay_out_of_the_agents_history(
    tmp_path: Path,
) -> None:
    recording = CORPUS / "tau2" / "hotel-gemma-3-27b.json"
    results = json.loads(recording.read_text())
    messages = results["simulations"][0]["messages"]
    user_call = {"id": "u1", "name": "check_phone", "arguments": {}, "requestor": "user"}
    # A dual-control domain: the user runs a tool of their own before answering.
    messages[1:1] = [
        {"role": "user", "content": None, "tool_calls": [user_call], "turn_idx": 1},
        {"role": "tool", "id": "u1", "content": "signal: 4 bars", "requestor": "user"},
    ]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    with_user_tools = read_sample(path)
    assert with_user_tools == read_sample(recording)


@pytest.mark.parametrize(
    "recording", [r for r in RECORDINGS if r.parent.name == "swe_agent"], ids=name
)
def test_explain_accounts_for_every_model_call_and_action(recording: Path) -> None:
    readings = readings_of(recording)
    items = json.loads(recording.read_text())["trajectory"]
    assert len([r for r in readings if r.kind == "llm"]) == len(items)
    assert len([r for r in readings if r.kind == "tool"]) == len([i for i in items if i["action"]])


def test_a_last_call_whose_tool_call_is_not_kept_is_named() -> None:
    readings = readings_of(CORPUS / "swe_agent" / "gpt-4o-function-calling-1.x.traj")
    blocked = [r for r in readings if r.reason is not None]
    assert [(r.location, r.reason) for r in blocked] == [
        ("$.trajectory[4]", "tool_call_not_recorded")
    ]
    assert "'submit'" in (blocked[0].detail or "")


EVALUATION_OUTPUT = CORPUS / "openhands" / "llama-4-maverick-multi-swe-bench.jsonl"


def test_an_openhands_evaluation_output_gives_one_unit_per_model_response() -> None:
    assert EVALUATION_OUTPUT.name in (EVALUATION_OUTPUT.parent / "PROVENANCE.md").read_text()
    run = json.loads(EVALUATION_OUTPUT.read_text().splitlines()[0])
    system = run["history"][0]["args"]
    responses: dict[str, dict[str, Any]] = {}
    for event in run["history"]:
        response = (event.get("tool_call_metadata") or {}).get("model_response")
        if event.get("action") and response:
            responses.setdefault(response["id"], response)
    units = units_of(EVALUATION_OUTPUT)
    assert len(units) == len(responses) == 23
    for unit, response in zip(units, responses.values(), strict=True):
        answer = response["choices"][0]["message"]
        assert unit.golden.message.text() == (answer["content"] or "")
        assert [c.name for c in unit.golden.message.tool_calls or []] == [
            c["function"]["name"] for c in answer["tool_calls"] or []
        ]
        assert unit.golden.usage is not None
        assert unit.golden.usage.input_tokens == response["usage"]["prompt_tokens"]
        assert unit.request.model == "openrouter-llama-4-maverick"
        assert unit.request.messages[0].text() == system["content"]
        assert [t.name for t in unit.request.tools or []] == [
            t["function"]["name"] for t in system["tools"]
        ]
        assert unit.reconstructed
    # The first call sees the system prompt and the task; later ones end with a tool's output.
    assert [m.role for m in units[0].request.messages] == ["system", "user"]
    assert all(u.request.messages[-1].role == "tool" for u in units[1:])
    assert_replayable(units)


@pytest.mark.parametrize(
    "recording",
    [r for r in RECORDINGS if r.parent.name == "openhands"] + [EVALUATION_OUTPUT],
    ids=name,
)
def test_explain_accounts_for_every_model_answer_and_tool_output(recording: Path) -> None:
    readings = readings_of(recording)
    text = recording.read_text()
    events = (
        json.loads(text.splitlines()[0])["history"]
        if recording.suffix == ".jsonl"
        else json.loads(text)
    )
    answers = {
        (e.get("tool_call_metadata") or {}).get("model_response", {}).get("id") or e["id"]
        for e in events
        if e.get("source") == "agent"
        and (e.get("tool_call_metadata") or e.get("action") == "message")
        and e.get("action")
    }
    outputs = [e for e in events if e.get("observation") and e.get("tool_call_metadata")]
    assert len([r for r in readings if r.kind == "llm"]) == len(answers)
    assert len([r for r in readings if r.kind == "tool"]) == len(outputs)


def test_a_damaged_eval_archive_fails_cleanly() -> None:
    from tests.formats.test_malformed_inputs import check_reads_or_fails_cleanly

    seed = (CORPUS / "inspect" / "message-pool-tools-0.3.135.eval").read_bytes()
    for cut in range(0, len(seed), max(1, len(seed) // 40)):
        check_reads_or_fails_cleanly(seed[:cut], "inspect", ".eval")
    for at in range(0, len(seed), max(1, len(seed) // 40)):
        damaged = bytearray(seed)
        damaged[at : at + 4] = b"\xff\x00{\n"
        check_reads_or_fails_cleanly(bytes(damaged), "inspect", ".eval")


BROWSER_LOG = CORPUS / "inspect" / "browser-tools-gpt-4o-mini-0.3.95.json.gz"
BROWSER_LOG_SHA256 = "e19b39ad6bf6358cd79ab3b71495b27cafde6835df72648b2988ef0af326d327"


def test_an_inspect_agent_with_browser_tools_gives_one_unit_per_model_event(
    tmp_path: Path,
) -> None:
    assert BROWSER_LOG.name in (BROWSER_LOG.parent / "PROVENANCE.md").read_text()
    # Kept gzipped (the largest recording, 405 KB as a log); read as Inspect wrote it.
    recorded = gzip.decompress(BROWSER_LOG.read_bytes())
    assert hashlib.sha256(recorded).hexdigest() == BROWSER_LOG_SHA256
    log = tmp_path / BROWSER_LOG.stem
    log.write_bytes(recorded)
    sample = json.loads(recorded)["samples"][0]
    events = [e for e in sample["events"] if e["event"] == "model"]
    units = units_of(log)
    assert len(units) == len(events) == 5
    results = 0
    for unit, event in zip(units, events, strict=True):
        choice = event["output"]["choices"][0]
        calls = choice["message"].get("tool_calls") or []
        assert [[c.name, c.arguments] for c in unit.golden.message.tool_calls or []] == [
            [c["function"], c["arguments"]] for c in calls
        ]
        assert unit.golden.finish_reason == ("tool_calls" if calls else "stop")
        assert unit.golden.usage is not None
        assert unit.golden.usage.input_tokens == event["output"]["usage"]["input_tokens"]
        assert [t.name for t in unit.request.tools or []] == [t["name"] for t in event["tools"]]
        assert unit.request.tool_choice == "auto"
        assert unit.request.params == {"parallel_tool_calls": False}
        # Each call sees every earlier browser action's result, answered by its call id.
        tool_messages = [m for m in unit.request.messages if m.role == "tool"]
        assert len(tool_messages) == results
        results += len(calls)
    assert_replayable(units)
