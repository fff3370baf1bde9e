"""Profiles of the shipped samples: a Langfuse export, an OTLP trace and τ-bench trajectories."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agent_backtest.formats import ReadOptions, SkipLog
from agent_backtest.profiling import Profiler
from agent_backtest.runs.profile import Profile
from tests.conftest import FIXTURES

from .test_cli import run

LANGFUSE = FIXTURES / "traces" / "microsoft-agent-2025-12-17.trace.json"
OTLP = FIXTURES / "traces" / "otlp_canonical_trace.json"


def profile_with(reader_name: str, path: Path, group_by: str = "agent") -> Profile:
    """Profile a file through one reader (read directly: the reader may not be registered yet)."""
    reader = pytest.importorskip(f"agent_backtest.formats.{reader_name}")
    profiler = Profiler(group_by)
    for session in reader.read(path, ReadOptions(), SkipLog(str(path))):
        profiler.add(session, str(path), reader.FORMAT)
    return profiler.result([])


def test_langfuse_export_times_gaps_and_tokens() -> None:
    [group] = profile_with("langfuse", LANGFUSE).groups.values()
    # invoke_agent 37.258–41.622; chat 37.260–40.549; get_weather 40.551–40.551;
    # chat 40.555–41.620 (seconds past 09:37)
    llm = group.time.llm_service_ms.all
    assert (llm.count, llm.total, llm.p50, llm.max) == (2, 4354.0, 1065.0, 3289.0)
    assert group.time.tool_service_ms.by_tool["get_weather"].total == 0.0
    gaps = group.time.gap_ms
    assert gaps.by_transition["llm_to_tool"].total == 2.0
    assert gaps.by_transition["tool_to_llm"].total == 4.0
    assert gaps.within_turns.total == 6.0
    assert group.time.session_span_ms.total == 4364.0
    tokens = group.tokens.by_model["gpt-5-mini-2025-08-07"]
    assert (tokens.input.total, tokens.output.total) == (77 + 216, 86 + 20)
    assert group.calls.tool.by_tool == {"get_weather": 1}
    # the export records no span status: every call's outcome is unknown, and says so
    assert group.calls.tool.by_status.timeout_or_unknown == 1
    assert group.failures.available is False
    assert group.calls.tool.parallel.overlapping_calls.total == 0


def test_otlp_sample_has_a_span_but_no_calls() -> None:
    [group] = profile_with("otlp", OTLP).groups.values()
    assert group.sessions == 1
    assert group.calls.llm.total == 0 and group.calls.tool.total == 0
    assert group.time.session_span_ms.total == 1000.0
    assert group.time.llm_service_ms.all.reason == "no LLM calls"


def tau_tool_calls(path: Path) -> tuple[Counter[str], int, int]:
    """Tool calls by name, retries and repeats, worked out from the raw trajectories."""
    by_name: Counter[str] = Counter()
    retries = repeats = 0
    for item in json.loads(path.read_text()):
        requested, previous, seen = {}, None, set()
        for message in item["traj"]:
            for call in message.get("tool_calls") or []:
                requested[call["id"]] = call["function"]
            if message["role"] != "tool":
                continue
            function = requested[message["tool_call_id"]]
            key = (function["name"], json.dumps(json.loads(function["arguments"]), sort_keys=True))
            by_name[function["name"]] += 1
            retries += key == previous
            repeats += key in seen
            previous = key
            seen.add(key)
    return by_name, retries, repeats


def test_tau_bench_profile_counts_calls_and_loops_and_says_times_are_missing(
    tau_trajectories: Path, tau_tools: Path
) -> None:
    code, stdout, _ = run(
        "profile", tau_trajectories, "--tools", tau_tools, "--recorded-model", "gpt-4o", "--json"
    )
    assert code == 0
    profile = json.loads(stdout)
    [group] = profile["groups"].values()
    by_name, retries, repeats = tau_tool_calls(tau_trajectories)
    tool = group["calls"]["tool"]
    assert tool["by_tool"] == dict(sorted(by_name.items()))
    assert tool["total"] == 621 and group["calls"]["llm"]["total"] == 1381
    assert group["calls"]["llm"]["by_model"] == {"gpt-4o": 1381}
    assert tool["repeated"]["retries"]["total"] == retries
    assert tool["repeated"]["repeats"]["total"] == repeats
    time = group["time"]
    assert time["tool_service_ms"]["all"]["total"] is None
    assert (
        time["tool_service_ms"]["all"]["reason"]
        == "621 of 621 tool calls have no start or end time"
    )
    assert (
        time["llm_service_ms"]["all"]["reason"]
        == "1381 of 1381 LLM calls have no start or end time"
    )
    assert time["session_span_ms"]["reason"] == "100 of 100 sessions record no step times"
    assert tool["parallel"]["overlapping_calls"]["available"] is False


def test_tau_bench_table_prints_tools_retries_and_missing_times(
    tau_trajectories: Path, tau_tools: Path
) -> None:
    code, stdout, _ = run("profile", tau_trajectories, "--tools", tau_tools)
    assert code == 0
    _, retries, _ = tau_tool_calls(tau_trajectories)
    assert "get_reservation_details" in stdout and "134" in stdout
    retries_row = next(line for line in stdout.splitlines() if "retries" in line)
    assert str(retries) in retries_row
    assert "621 of 621 tool calls have no start or end time" in stdout.replace("\n", " ")
