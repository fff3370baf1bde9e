"""The agent version each reader records per step, from what real traces hold; missing is None."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.formats import ReadOptions, SessionStream
from agent_backtest.formats.tools_file import load_tools_file
from agent_backtest.trace import Session
from agent_backtest.units import AgentConfig, Unit, units_from_session
from tests.conftest import FIXTURES, TAU_TOOLS
from tests.formats.otlp_json import any_value

KOOG = FIXTURES / "traces" / "koog-2025-08-26.trace.json"
AGENT_FRAMEWORK = FIXTURES / "traces" / "microsoft-agent-2025-12-17.trace.json"
OTLP_EVENTS = FIXTURES / "otlp" / "events.jsonl"
OTLP_OPENINFERENCE = FIXTURES / "otlp" / "openinference.jsonl"
AGENT_SPAN = "00f067aa0ba902b6"


def read(path: Path, tools: Path | None = None) -> list[Session]:
    options = ReadOptions(tools=load_tools_file(tools) if tools else None)
    return list(SessionStream([path], options))


def versions(session: Session) -> list[str | None]:
    return [step.agent_version for step in session.steps()]


def units(session: Session) -> list[Unit]:
    return [u for u in units_from_session(session, AgentConfig()) if isinstance(u, Unit)]


# --- Langfuse ---------------------------------------------------------------------------------


def koog_export() -> dict[str, Any]:
    return json.loads(KOOG.read_text())


def write(path: Path, export: dict[str, Any]) -> Path:
    path.write_text(json.dumps(export))
    return path


def test_langfuse_steps_carry_the_recorded_version() -> None:
    (session,) = read(KOOG)
    assert set(versions(session)) == {"0.3.0"}
    assert session.agent is not None and session.agent.version == "0.3.0"
    assert [u.agent_version for u in units(session)] == ["0.3.0", "0.3.0"]


def test_langfuse_observation_version_first_then_trace_version_then_release(
    tmp_path: Path,
) -> None:
    export = koog_export()
    export["trace"]["version"] = "trace-v"
    export["trace"]["release"] = "release-r"
    first_llm = next(o for o in export["observations"] if o["type"] == "GENERATION")
    first_llm["version"] = "observation-v"
    (session,) = read(write(tmp_path / "a.json", export))
    by_id = {step.id: step.agent_version for step in session.steps()}
    assert by_id[first_llm["id"]] == "observation-v"
    assert set(by_id.values()) == {"observation-v", "0.3.0"}  # the others keep their own
    assert session.agent.version is None  # the steps disagree

    for observation in export["observations"]:
        observation["version"] = None
    (session,) = read(write(tmp_path / "b.json", export))
    assert set(versions(session)) == {"trace-v"}

    export["trace"]["version"] = None
    (session,) = read(write(tmp_path / "c.json", export))
    assert set(versions(session)) == {"release-r"}


def test_langfuse_falls_back_to_the_service_version_of_the_resource(tmp_path: Path) -> None:
    export = koog_export()
    export["trace"]["version"] = None
    for observation in export["observations"]:
        observation["version"] = None
    (session,) = read(write(tmp_path / "service.json", export))
    assert set(versions(session)) == {"0.3.0"}  # metadata.resourceAttributes service.version

    for observation in export["observations"]:
        metadata = json.loads(observation["metadata"])
        del metadata["resourceAttributes"]["service.version"]
        observation["metadata"] = json.dumps(metadata)
    (session,) = read(write(tmp_path / "none.json", export))
    assert set(versions(session)) == {None}
    assert session.agent.version is None


def test_langfuse_without_versions_records_none_not_the_sdk_or_scope_version() -> None:
    # The export holds telemetry.sdk.version 1.39.1 and scope version 1.0.0b251216: neither is
    # the agent's.
    (session,) = read(AGENT_FRAMEWORK)
    assert set(versions(session)) == {None}
    assert session.agent.version is None
    assert {u.agent_version for u in units(session)} == {None}


# --- OTLP -------------------------------------------------------------------------------------


def otlp_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path: Path, documents: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in documents))
    return path


def set_resource(document: dict[str, Any], key: str, value: Any) -> None:
    for resource in document["resourceSpans"]:
        attributes = [a for a in resource["resource"]["attributes"] if a["key"] != key]
        if value is not None:
            attributes.append({"key": key, "value": any_value(value)})
        resource["resource"]["attributes"] = attributes


def spans_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    resource = document["resourceSpans"][0]
    scopes = resource.get("scopeSpans") or resource["instrumentationLibrarySpans"]
    return scopes[0]["spans"]


def test_otlp_steps_carry_the_service_version() -> None:
    (session,) = read(OTLP_EVENTS)
    assert versions(session) == ["1.2.0", "1.2.0"]
    assert session.agent.version == "1.2.0"


def test_a_session_across_a_deploy_keeps_each_steps_version(tmp_path: Path) -> None:
    documents = otlp_lines(OTLP_EVENTS)
    set_resource(documents[1], "service.version", "1.3.0")
    (session,) = read(write_lines(tmp_path / "deploy.jsonl", documents))
    assert versions(session) == ["1.2.0", "1.3.0"]
    assert session.agent.name == "weather-agent" and session.agent.version is None
    assert [u.agent_version for u in units(session)] == ["1.2.0", "1.3.0"]


def test_otlp_without_service_version_records_none(tmp_path: Path) -> None:
    documents = otlp_lines(OTLP_EVENTS)
    for document in documents:
        set_resource(document, "service.version", None)
    (session,) = read(write_lines(tmp_path / "none.jsonl", documents))
    assert versions(session) == [None, None]
    assert session.agent.version is None


def test_gen_ai_agent_version_of_the_enclosing_agent_span_comes_first(tmp_path: Path) -> None:
    documents = otlp_lines(OTLP_OPENINFERENCE)
    agent = next(s for s in spans_of(documents[0]) if s["spanId"] == AGENT_SPAN)
    agent["attributes"].append({"key": "gen_ai.agent.version", "value": any_value("2.0.1")})
    (session,) = read(write_lines(tmp_path / "agent.jsonl", documents))
    assert versions(session) == ["2.0.1", "2.0.1", "2.0.1"]  # over service.version 1.2.0

    llm = spans_of(documents[1])[0]
    llm["attributes"].append({"key": "gen_ai.agent.version", "value": any_value("2.0.2")})
    (session,) = read(write_lines(tmp_path / "nearest.jsonl", documents))
    assert versions(session) == ["2.0.1", "2.0.1", "2.0.2"]
    assert session.agent.version is None


def test_openllmetry_agent_span_version(tmp_path: Path) -> None:
    documents = otlp_lines(OTLP_OPENINFERENCE)
    agent = next(s for s in spans_of(documents[0]) if s["spanId"] == AGENT_SPAN)
    agent["attributes"] += [
        {"key": "traceloop.span.kind", "value": any_value("agent")},
        {"key": "traceloop.entity.version", "value": any_value(3)},  # an int, as the SDK sets it
    ]
    (session,) = read(write_lines(tmp_path / "traceloop.jsonl", documents))
    assert versions(session) == ["3", "3", "3"]

    agent["attributes"][-2] = {"key": "traceloop.span.kind", "value": any_value("task")}
    (session,) = read(write_lines(tmp_path / "task.jsonl", documents))
    assert versions(session) == ["1.2.0", "1.2.0", "1.2.0"]  # a task's version is not the agent's


# --- formats that record the version once, or not at all -------------------------------------


def test_session_steps_version_is_every_steps_version() -> None:
    sessions = read(FIXTURES / "session_steps" / "example.json")
    assert [s.agent.version for s in sessions] == ["2025.03.1", "2025.03.1"]
    assert all(set(versions(s)) == {"2025.03.1"} for s in sessions)


@pytest.mark.parametrize(
    ("path", "tools"),
    [
        (FIXTURES / "chat_log" / "example.jsonl", None),
        (FIXTURES / "cassette" / "test_chat_completion_tool_calls_with_content.yaml", None),
        (FIXTURES / "tau_airline" / "two_trajectories.json", TAU_TOOLS),
        (FIXTURES / "canonical" / "sessions.jsonl", None),
    ],
)
def test_formats_that_record_no_version_leave_it_none(path: Path, tools: Path | None) -> None:
    sessions = read(path, tools)
    assert sessions
    assert all(set(versions(s)) == {None} for s in sessions)
    assert all(s.agent is None or s.agent.version is None for s in sessions)
