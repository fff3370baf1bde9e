"""``abt profile`` driven in-process: output files, determinism, Markdown, variants, errors."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.profiling import case_fingerprint
from agent_backtest.trace import dump_record

from .traces import llm, session, tool, worked_session

runner = CliRunner()


def run(*args: str | Path) -> tuple[int, str, str]:
    """Run ``abt`` with these arguments at a fixed width: (exit code, stdout, stderr)."""
    result = runner.invoke(
        app, [str(a) for a in args], terminal_width=200, env={"COLUMNS": "200", "NO_COLOR": "1"}
    )
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def sessions_file(tmp_path: Path) -> Path:
    """Canonical JSONL of two agent versions: v1 calls search twice, v2 once and faster."""
    v1 = worked_session()
    v2 = session(
        "fast",
        [
            llm("a", 0, 50, "m1", (10, 1)),
            tool("b", "search", 60, 80, {"q": 1}),
            llm("c", 90, 100, "m1", (20, 2)),
        ],
        version="2",
    )
    path = tmp_path / "sessions.jsonl"
    path.write_bytes(b"".join(dump_record(s) + b"\n" for s in (v1, v2)))
    return path


def test_profile_file_is_byte_identical_across_runs(tmp_path: Path) -> None:
    path = sessions_file(tmp_path)
    first, second = tmp_path / "a" / "profile.json", tmp_path / "b" / "profile.json"
    assert run("profile", path, "-o", first)[0] == 0
    assert run("profile", path, "-o", second)[0] == 0
    assert first.read_bytes() == second.read_bytes()
    profile = json.loads(first.read_text())
    assert profile["schema"] == "abt.profile/2" and sorted(profile["groups"]) == [
        "helper@1",
        "helper@2",
    ]
    assert list(profile) == sorted(profile)


def test_variants_side_by_side_with_differences(tmp_path: Path) -> None:
    path = sessions_file(tmp_path)
    code, stdout, _ = run(
        "profile",
        path,
        "--variant",
        "v1=agent_version=1",
        "--variant",
        "v2=agent_version=2",
        "--json",
    )
    assert code == 0
    comparison = json.loads(stdout)["comparison"]
    assert comparison["baseline"] == "v1" and comparison["order"] == ["v1", "v2"]
    diff = comparison["variants"]["v2"]
    assert diff["/calls/tool/total"] == {"baseline": 5, "value": 1, "difference": -4}
    # v2 never called lookup: a count of zero, not a missing figure
    assert diff["/calls/tool/by_tool/lookup"] == {"baseline": 1, "value": 0, "difference": -1}
    # v1's tool time total is null (a missing end): no difference is made up
    assert diff["/time/tool_service_ms/all/total"] == {
        "baseline": None,
        "value": 20.0,
        "difference": None,
    }
    # LLM times 100, 80, 50, 100 against 50, 10: p95 100 → 50
    assert diff["/time/llm_service_ms/all/p95"]["difference"] == -50.0
    # lookup has no time in v2 at all: absent, not zero
    assert diff["/time/tool_service_ms/by_tool/lookup/p50"]["value"] is None


def test_variant_selectors_exclude_and_negate(tmp_path: Path) -> None:
    path = sessions_file(tmp_path)
    code, stdout, _ = run("profile", path, "--variant", "no-lookup=tool!=lookup", "--json")
    assert code == 0
    profile = json.loads(stdout)
    assert list(profile["groups"]) == ["no-lookup"] and profile["sessions_in_no_group"] == 1
    assert profile["groups"]["no-lookup"]["sessions"] == 1


def test_markdown_summary(tmp_path: Path) -> None:
    code, stdout, _ = run("profile", sessions_file(tmp_path), "--markdown")
    assert code == 0
    assert stdout.startswith("# Agent loop profile (by agent)")
    assert "| figure | helper@1 | helper@2 |" in stdout
    assert "| sessions | 1 | 1 |" in stdout
    assert "- helper@1: time.tool_service_ms.all: 1 of 5 tool calls have no end time" in stdout


def test_annotated_runs_by_variant(tmp_path: Path, tau_trajectories: Path) -> None:
    case = {"id": "t0", "title": "Task 0", "prompt": "book a flight"}
    (tmp_path / "cases.json").write_text(json.dumps({"schema": "abt.cases/1", "cases": [case]}))
    base = {
        "schema": "abt.run-annotation/1",
        "case_id": "t0",
        "base_revision": "a" * 40,
        "case_fingerprint": case_fingerprint(case),
    }
    runs = [
        {
            **base,
            "variant": "A",
            "session_ids": ["tau-task0-trial0", "tau-task0-trial1"],
            "repair_turns": {"total": 2, "by_reason": {"invalid_arguments": 2}},
            "task_timing": {"started_at_ms": 0, "ended_at_ms": 5000},
            "correctness": {"task_verdict": "pass", "validation_verdict": "unavailable"},
        },
        {
            **base,
            "variant": "B",
            "session_ids": ["tau-task0-trial2", "not-in-input"],
            "correctness": {"task_verdict": "fail", "validation_verdict": "unavailable"},
        },
    ]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    code, stdout, stderr = run(
        "profile",
        tau_trajectories,
        "--group-by",
        "variant",
        "--annotations",
        tmp_path / "runs.jsonl",
        "--case-manifest",
        tmp_path / "cases.json",
        "--json",
    )
    assert code == 0, stderr
    profile = json.loads(stdout)
    assert sorted(profile["groups"]) == ["A", "B"] and profile["sessions_in_no_group"] == 97
    a, b = profile["groups"]["A"]["runs"], profile["groups"]["B"]["runs"]
    assert (a["runs"], a["sessions_annotated"], a["cases"]) == (1, 2, ["t0"])
    assert a["repair_turns"]["total"]["total"] == 2
    assert a["task_time_ms"]["total"] == 5000.0
    assert b["repair_turns"]["total"]["total"] is None
    assert b["repair_turns"]["total"]["reason"] == "1 of 1 runs have no repair turn count"
    assert b["task_verdicts"]["fail"] == 1
    assert profile["annotations"]["annotated_sessions_not_in_input"] == 1
    assert (
        profile["comparison"]["variants"]["B"]["/calls/llm/total"]["baseline"]
        == profile["groups"]["A"]["calls"]["llm"]["total"]
    )


def test_errors_for_people(tmp_path: Path) -> None:
    path = sessions_file(tmp_path)
    code, _, stderr = run("profile", path, "--variant", "oops")
    assert code == 2 and stderr.startswith("abt: error: --variant: 'oops': expected NAME=SELECTOR")
    code, _, stderr = run("profile", path, "--variant", "a=colour=red")
    assert code == 2 and "unknown field 'colour'" in stderr
    code, _, stderr = run("profile", path, "--variant", "a=agent=*", "--variant", "b=model=m1")
    assert code == 2 and "matches variants a and b" in stderr
    code, _, stderr = run("profile", path, "--variant", "a=agent=*", "--group-by", "session")
    assert code == 2 and "variants need --group-by variant" in stderr
    code, _, stderr = run("profile", path, "--group-by", "variant")
    assert code == 2 and "--group-by: variant needs --variant NAME=SELECTOR" in stderr
    code, _, stderr = run("profile", path, "--annotations", path)
    assert code == 2 and "--annotations: needs --case-manifest" in stderr
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps({"m1": {"input_per_million": 1, "output_per_million": 2, "currency": "EUR"}})
    )
    code, _, stderr = run("profile", path, "--prices", prices)
    assert code == 2 and "prices.json: $.m1.currency: unknown field" in stderr
    assert len(stderr.strip().splitlines()) == 1


def test_prices_give_cost(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"m1": {"input_per_million": 1, "output_per_million": 2}}))
    code, stdout, _ = run("profile", sessions_file(tmp_path), "--prices", prices, "--json")
    assert code == 0
    cost = json.loads(stdout)["groups"]["helper@2"]["tokens"]["cost"]
    assert cost["total"] == (30 * 1 + 3 * 2) / 1_000_000
