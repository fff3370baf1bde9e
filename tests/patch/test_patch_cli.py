"""``abt patch check`` and ``abt replay --patch`` end to end against a real local HTTP server."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.patch.ops import load_patch
from agent_backtest.trace import dump_record, sha256_of
from tests.fake_openai import FakeOpenAI
from tests.patch.tau_units import tau_units

runner = CliRunner()
REFUND = {
    "id": "refund-rule",
    "target": "system",
    "action": "replace",
    "find": "within 24 hours",
    "replace": "within 48 hours",
}
TYPO = {"id": "drop-search", "target": "tool", "action": "remove", "tool": "search_flight"}


@pytest.fixture
def units_file(tmp_path: Path) -> Path:
    """24 τ-bench units; the first 8 belong to node triage, the rest to node booking."""
    path = tmp_path / "units.jsonl"
    units = [
        unit.model_copy(update={"node": "triage" if index < 8 else "booking"})
        for index, unit in enumerate(tau_units(24))
    ]
    path.write_bytes(b"".join(dump_record(unit) + b"\n" for unit in units))
    return path


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    monkeypatch.chdir(tmp_path)  # no stray abt.toml


def abt(*args: object) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def patch_file(tmp_path: Path, *ops: dict[str, Any], name: str = "policy.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"schema": "abt.patch/1", "ops": list(ops)}))
    return path


def replay(units: Path, fake_openai: FakeOpenAI, out: Path, *extra: object) -> tuple[int, str]:
    code, stdout, stderr = abt(
        "replay",
        units,
        "--model",
        "openai/candidate",
        "--base-url",
        fake_openai.base_url,
        "--out",
        out,
        "--cache-dir",
        out.parent / "cache",
        "--max-retries",
        "0",
        *extra,
    )
    return code, stdout + stderr


def records(run: Path) -> dict[str, dict[str, Any]]:
    lines = (run / "results.jsonl").read_text().splitlines()
    return {record["unit_id"]: record for record in map(json.loads, lines)}


def triage_ids(units: Path) -> set[str]:
    return {
        json.loads(line)["unit_id"]
        for line in units.read_text().splitlines()
        if json.loads(line)["node"] == "triage"
    }


# -- abt patch check ----------------------------------------------------------------------------


def test_check_prints_the_coverage_and_a_diff(units_file: Path, tmp_path: Path) -> None:
    code, stdout, _ = abt("patch", "check", patch_file(tmp_path, REFUND), units_file)
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0] == "patch policy.json: 1 op over 24 units; 24 requests changed"
    assert lines[2].split() == ["refund-rule", "system", "replace", "24", "24", "24", "ok"]
    first = tau_units()[0].unit_id
    assert f"--- unit {first} before op refund-rule" in lines
    assert any(
        line.startswith("+- All reservations can be cancelled within 48 hours") for line in lines
    )


def test_check_reads_traces_and_exits_1_on_an_unmatched_op(tmp_path: Path) -> None:
    from tests.conftest import TAU_TOOLS, TAU_TRAJECTORIES

    code, stdout, stderr = abt(
        "patch",
        "check",
        patch_file(tmp_path, REFUND, TYPO),
        TAU_TRAJECTORIES,
        "--tools",
        TAU_TOOLS,
        "--limit",
        "50",
        "--json",
    )
    assert code == 1
    report = json.loads(stdout)
    assert report["units"] == 50 and report["unmatched"] == ["drop-search"]
    assert [op["status"] for op in report["ops"]] == ["ok", "no_target"]
    assert stderr.strip() == "abt: 1 patch op(s) matched nothing: 'drop-search'"


def test_check_of_a_broken_patch_is_one_line(units_file: Path, tmp_path: Path) -> None:
    broken = patch_file(tmp_path, {**REFUND, "action": "swap"})
    code, _, stderr = abt("patch", "check", broken, units_file)
    assert code == 2
    assert stderr.strip() == (
        f"abt: error: {broken}: ops[0] (id 'refund-rule'): target "
        "'system' takes action append, prepend, replace, set; not 'swap'"
    )


# -- abt replay --patch -------------------------------------------------------------------------


def test_an_unmatched_op_stops_the_run_before_anything_is_sent(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    run = tmp_path / "runs" / "typo"
    code, output = replay(
        units_file, fake_openai, run, "--patch", patch_file(tmp_path, REFUND, TYPO)
    )
    assert code == 2 and fake_openai.total == 0
    assert (
        "1 patch op(s) matched nothing: 'drop-search' (none of the 24 units in scope has tool "
        "'search_flight'"
    ) in output
    assert "nothing was written or sent" in output
    assert "--allow-unmatched replays anyway" in output
    assert not run.exists()  # a failed check leaves nothing behind
    # The fixed patch runs in the same directory: the stopped attempt left no run there.
    code, output = replay(units_file, fake_openai, run, "--patch", patch_file(tmp_path, REFUND))
    assert code == 0, output
    assert json.loads((run / "patch_coverage.json").read_text())["unmatched"] == []


def test_allow_unmatched_replays_anyway(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    run = tmp_path / "runs" / "allowed"
    code, output = replay(
        units_file,
        fake_openai,
        run,
        "--no-score",
        "--allow-unmatched",
        "--patch",
        patch_file(tmp_path, REFUND, TYPO),
    )
    assert code == 0, output
    assert fake_openai.total == 24
    assert all(r["patch_ops"] == ["refund-rule"] for r in records(run).values())
    assert json.loads((run / "run.json").read_text())["config"]["patch"]["allow_unmatched"]


def test_patched_and_untouched_units_against_a_base_run(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    base_run, patched_run = tmp_path / "runs" / "base", tmp_path / "runs" / "patched"
    assert replay(units_file, fake_openai, base_run, "--no-score")[0] == 0
    base_bodies = {sha256_of(body): body for body in fake_openai.bodies}
    sent_before = fake_openai.total
    patch = patch_file(tmp_path, {**REFUND, "nodes": ["triage"]})
    code, output = replay(units_file, fake_openai, patched_run, "--no-score", "--patch", patch)
    assert code == 0, output
    base, patched = records(base_run), records(patched_run)
    triage = triage_ids(units_file)
    assert set(base) == set(patched) and len(triage) == 8  # unit ids pair the runs
    # units.jsonl keeps production's requests, byte for byte.
    assert (
        (patched_run / "units.jsonl").read_bytes()
        == units_file.read_bytes()
        == (base_run / "units.jsonl").read_bytes()
    )
    for unit_id, record in patched.items():
        assert record["base_request_sha"] == base[unit_id]["request_sha"]
        if unit_id in triage:
            assert record["patch_ops"] == ["refund-rule"] and not record["cache_hit"]
            assert record["request_sha"] != record["base_request_sha"]
        else:  # sent exactly as the base run sent it, so the cache answered it
            assert record["patch_ops"] == [] and record["cache_hit"]
            assert record["request_sha"] == base[unit_id]["request_sha"]
            assert record["response"] == base[unit_id]["response"]
    new_bodies = fake_openai.bodies[sent_before:]
    assert len(new_bodies) == fake_openai.total - sent_before == 8
    assert all("within 48 hours" in body["messages"][0]["content"] for body in new_bodies)
    assert not any(sha256_of(body) in base_bodies for body in new_bodies)


def test_an_untouched_request_is_byte_identical_to_the_recorded_one(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    base_run, patched_run = tmp_path / "runs" / "base", tmp_path / "runs" / "patched"
    assert replay(units_file, fake_openai, base_run, "--no-score", "--no-cache")[0] == 0
    base_bodies = [json.dumps(body, sort_keys=True) for body in fake_openai.bodies]
    fake_openai.bodies.clear()
    patch = patch_file(tmp_path, {**REFUND, "nodes": ["triage"]})
    assert (
        replay(units_file, fake_openai, patched_run, "--no-score", "--no-cache", "--patch", patch)[
            0
        ]
        == 0
    )
    patched_bodies = [json.dumps(body, sort_keys=True) for body in fake_openai.bodies]
    untouched = set(base_bodies) & set(patched_bodies)
    assert len(untouched) == 16 and len(set(patched_bodies)) == 24


def test_the_run_keeps_its_patch_and_resume_applies_it(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    run = tmp_path / "runs" / "patched"
    patch = patch_file(tmp_path, REFUND)
    assert (
        replay(units_file, fake_openai, run, "--no-score", "--no-cache", "--patch", patch)[0] == 0
    )
    config = json.loads((run / "run.json").read_text())["config"]["patch"]
    assert config == {
        "file": "policy.json",
        "ops": ["refund-rule"],
        "allow_unmatched": False,
        "sha256": hashlib.sha256(patch.read_bytes()).hexdigest(),
    }
    assert load_patch(run / "patch.json") == load_patch(patch)
    assert stat.S_IMODE((run / "patch.json").stat().st_mode) == 0o600
    # Lose the last 10 results, change the patch file the user gave: resume uses the run's copy.
    lines = (run / "results.jsonl").read_text().splitlines(keepends=True)
    (run / "results.jsonl").write_text("".join(lines[:14]))
    patch.write_text("not a patch any more")
    fake_openai.bodies.clear()
    code, _, _ = abt("replay", "--resume", run, "--no-score")
    assert code == 0
    assert len(fake_openai.bodies) == 10
    assert all("within 48 hours" in body["messages"][0]["content"] for body in fake_openai.bodies)
    assert all(r["patch_ops"] == ["refund-rule"] for r in records(run).values())


def test_resume_refuses_an_edited_patch_copy(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    run = tmp_path / "runs" / "patched"
    assert (
        replay(units_file, fake_openai, run, "--no-score", "--patch", patch_file(tmp_path, REFUND))[
            0
        ]
        == 0
    )
    (run / "patch.json").write_text(
        json.dumps({"schema": "abt.patch/1", "ops": [{**REFUND, "id": "other"}]})
    )
    code, _, stderr = abt("replay", "--resume", run, "--no-score")
    assert code == 2
    assert "its ops ['other'] are not the run's ['refund-rule'] (run.json)" in stderr
    code, _, stderr = abt("replay", "--resume", run, "--patch", run / "patch.json")
    assert code == 2 and "--resume: takes the run's own" in stderr


def test_dry_run_writes_the_coverage_and_sends_nothing(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    run = tmp_path / "runs" / "dry"
    code, output = replay(
        units_file, fake_openai, run, "--dry-run", "--patch", patch_file(tmp_path, REFUND)
    )
    assert code == 0, output
    assert fake_openai.total == 0
    assert (run / "patch_coverage.json").exists() and (run / "patch.json").exists()


def test_a_model_op_sends_its_units_to_that_model(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    run = tmp_path / "runs" / "swap"
    patch = patch_file(
        tmp_path,
        {
            "id": "bigger",
            "target": "model",
            "action": "set",
            "model": "openai/bigger",
            "nodes": ["triage"],
        },
    )
    assert replay(units_file, fake_openai, run, "--no-score", "--patch", patch)[0] == 0
    triage = triage_ids(units_file)
    for unit_id, record in records(run).items():
        expected = "openai/bigger" if unit_id in triage else "openai/candidate"
        assert record["model"] == expected
    assert (
        sorted(body["model"] for body in fake_openai.bodies) == ["bigger"] * 8 + ["candidate"] * 16
    )


def test_a_removed_tool_production_called_gets_its_own_bucket(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    run = tmp_path / "runs" / "removed"
    patch = patch_file(
        tmp_path,
        {
            "id": "no-lookup",
            "target": "tool",
            "action": "remove",
            "tool": "get_reservation_details",
        },
    )
    assert replay(units_file, fake_openai, run, "--patch", patch)[0] == 0
    golden = {
        json.loads(line)["unit_id"]: json.loads(line)["golden"]["message"]
        for line in units_file.read_text().splitlines()
    }
    called = {
        unit_id
        for unit_id, message in golden.items()
        if any(
            call["name"] == "get_reservation_details" for call in message.get("tool_calls") or []
        )
    }
    assert called  # the sample has such units
    scores = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    for score in scores:
        if score["unit_id"] in called:
            assert score["bucket"] == "removed_tool_called_in_golden"
            assert score["status"] == "unscored"
        else:
            assert score["bucket"] != "removed_tool_called_in_golden"
    assert all(r["removed_tools"] == ["get_reservation_details"] for r in records(run).values())
