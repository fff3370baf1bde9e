"""``abt replay`` end to end against a real HTTP server: records, cache, privacy, resume, kills."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.fake_openai import FakeOpenAI, request_key
from tests.processes import wait_for_lines

SECRET = "sk-test-SECRETSECRET0123456789"
runner = CliRunner()


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.chdir(tmp_path)  # no stray abt.toml


def abt(*args: object) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout + result.stderr


def records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def replay_args(units: Path, fake_openai: FakeOpenAI, out: Path, *extra: object) -> list[object]:
    return [
        "replay",
        units,
        "--model",
        "openai/candidate-1",
        "--base-url",
        fake_openai.base_url,
        "--out",
        out,
        "--cache-dir",
        out.parent / "cache",
        "--max-retries",
        "2",
        "--timeout",
        "5",
        *extra,
    ]


def test_replay_records_every_unit_privately(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    run = tmp_path / "runs" / "first"
    code, output = abt(*replay_args(units_file, fake_openai, run))
    assert code == 0, output
    results = records(run)
    assert len(results) == 24 == fake_openai.total
    assert {r["unit_id"] for r in results} == {
        json.loads(line)["unit_id"] for line in units_file.read_text().splitlines()
    }
    assert all(r["response"] and r["model"] == "openai/candidate-1" for r in results)
    assert not any("error" in r for r in results)
    assert all(r["seed"] == 0 and r["attempts"] == 1 and not r["cache_hit"] for r in results)
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["status"] == "completed" and manifest["counts"]["candidate"]["calls"] == 24
    assert manifest["inputs"][0]["sha256"] and manifest["units"] == 24
    assert stat.S_IMODE(run.stat().st_mode) == 0o700
    for path in [*run.iterdir(), *(tmp_path / "runs" / "cache").iterdir()]:
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in output


def test_a_rerun_with_the_cache_sends_nothing(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    abt(*replay_args(units_file, fake_openai, tmp_path / "runs" / "a"))
    code, _ = abt(*replay_args(units_file, fake_openai, tmp_path / "runs" / "b"))
    assert code == 0 and fake_openai.total == 24
    again = records(tmp_path / "runs" / "b")
    assert all(r["cache_hit"] and r["attempts"] == 0 for r in again)
    first = {r["unit_id"]: r["response"] for r in records(tmp_path / "runs" / "a")}
    assert {r["unit_id"]: r["response"] for r in again} == first


def test_repeats_use_seed_plus_repeat(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    run = tmp_path / "runs" / "k"
    code, _ = abt(
        *replay_args(units_file, fake_openai, run, "--k", "2", "--seed", "10", "--limit", "3")
    )
    assert code == 0
    assert sorted((r["repeat"], r["seed"]) for r in records(run)) == [(0, 10)] * 3 + [(1, 11)] * 3
    assert sorted(body["seed"] for body in fake_openai.bodies) == [10] * 3 + [11] * 3


def test_an_existing_run_is_refused_unless_overwritten(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    run = tmp_path / "runs" / "x"
    abt(*replay_args(units_file, fake_openai, run, "--limit", "2"))
    code, output = abt(*replay_args(units_file, fake_openai, run, "--limit", "2"))
    assert code == 2 and "already holds a run" in output
    code, _ = abt(*replay_args(units_file, fake_openai, run, "--limit", "1", "--overwrite"))
    assert code == 0 and len(records(run)) == 1


def test_dry_run_sends_nothing(units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    run = tmp_path / "runs" / "dry"
    code, _ = abt(*replay_args(units_file, fake_openai, run, "--dry-run"))
    assert code == 0 and fake_openai.total == 0
    assert len((run / "units.jsonl").read_text().splitlines()) == 24
    assert not (run / "results.jsonl").exists()


def test_a_missing_key_fails_before_any_call(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    code, output = abt(*replay_args(units_file, fake_openai, tmp_path / "runs" / "nokey"))
    assert code == 2 and "no key for openai: set OPENAI_API_KEY" in output
    assert fake_openai.total == 0


def test_infrastructure_errors_are_recorded_and_retried_on_resume(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    units = [json.loads(line) for line in units_file.read_text().splitlines()]
    failing = {
        request_key({"messages": [{"content": u["request"]["messages"][-1]["content"]}]})
        for u in units[:3]
    }
    for key in failing:
        fake_openai.faults[key] = ["500"] * 3
    run = tmp_path / "runs" / "errors"
    code, _ = abt(*replay_args(units_file, fake_openai, run))
    assert code == 0
    errors = [r for r in records(run) if r.get("error")]
    assert len(errors) == 3 and {r["error"]["kind"] for r in errors} == {"http_5xx"}
    assert all("response" not in r and r["attempts"] == 3 for r in errors)
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["counts"]["candidate"]["errors"] == {"http_5xx": 3}

    code, _ = abt("replay", "--resume", run)  # nothing missing: nothing sent
    assert code == 0 and fake_openai.total == 21 + 9
    code, _ = abt("replay", "--resume", run, "--retry-errors")
    assert code == 0
    final = records(run)
    assert len(final) == 24 and len({(r["unit_id"], r["repeat"]) for r in final}) == 24
    assert not any(r.get("error") for r in final)
    assert json.loads((run / "run.json").read_text())["attempts_of_run"] == 3


def test_mock_golden_answers_with_production(units_file: Path, tmp_path: Path) -> None:
    run = tmp_path / "runs" / "golden"
    code, _ = abt("replay", units_file, "--model", "mock/golden", "--out", run, "--no-cache")
    assert code == 0
    golden = {
        json.loads(line)["unit_id"]: json.loads(line)["golden"]
        for line in units_file.read_text().splitlines()
    }
    assert {r["unit_id"]: r["response"] for r in records(run)} == golden


def recorded_model_config(folder: Path, server: FakeOpenAI) -> Path:
    """An abt.toml that sends the units' recorded model (gpt-4o) to ``server`` as prod/gpt-4o."""
    config = folder / "abt.toml"
    config.write_text(
        f'[providers.prod]\ntype = "openai"\nbase_url = "{server.base_url}"\n'
        'api_key_env = "OPENAI_API_KEY"\n\n[aliases]\n"gpt-4o" = "prod/gpt-4o"\n'
    )
    return config


def test_model_trace_sends_each_unit_to_its_recorded_model(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    config = recorded_model_config(tmp_path, fake_openai)
    run = tmp_path / "runs" / "trace"
    code, output = abt(
        "replay",
        units_file,
        "--model",
        "trace",
        "--config",
        config,
        "--out",
        run,
        "--no-cache",
        "--limit",
        "4",
    )
    assert code == 0, output
    assert {body["model"] for body in fake_openai.bodies} == {"gpt-4o"}
    assert {r["model"] for r in records(run)} == {"prod/gpt-4o"}


def test_model_trace_without_an_alias_names_the_fix(units_file: Path, tmp_path: Path) -> None:
    code, output = abt("replay", units_file, "--model", "trace", "--out", tmp_path / "r")
    assert code == 2
    assert '[aliases] "gpt-4o" = "openai/gpt-4o"' in output


def run_replay_process(args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "agent_backtest.cli", "replay", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "OPENAI_API_KEY": SECRET},
    )


def test_sigkill_at_several_points_then_resume_loses_nothing(
    units_file: Path, tmp_path: Path
) -> None:
    concurrency = 4
    with FakeOpenAI(latency=0.15) as server:
        reference = tmp_path / "runs" / "reference"
        code, _ = abt(
            "replay",
            units_file,
            "--model",
            "openai/m",
            "--base-url",
            server.base_url,
            "--out",
            reference,
            "--no-cache",
            "--concurrency",
            str(concurrency),
        )
        assert code == 0
        paid_for_reference = server.total

        run = tmp_path / "runs" / "killed"
        first = [
            "--model",
            "openai/m",
            "--base-url",
            server.base_url,
            "--out",
            str(run),
            "--no-cache",
            "--concurrency",
            str(concurrency),
        ]
        process = run_replay_process([str(units_file), *first])
        kills = 0
        for threshold in (3, 10, 17):
            wait_for_lines(run / "results.jsonl", threshold, process)
            process.send_signal(signal.SIGKILL)
            process.wait()
            kills += 1
            process = run_replay_process(["--resume", str(run)])
        assert process.wait(timeout=120) == 0
        paid_for_killed = server.total - paid_for_reference

    final = records(run)
    assert len(final) == 24
    assert len({(r["unit_id"], r["repeat"]) for r in final}) == 24
    expected = {r["unit_id"]: r["response"] for r in records(reference)}
    assert {r["unit_id"]: r["response"] for r in final} == expected
    # Each kill can waste at most the calls in flight at that moment.
    assert paid_for_killed <= 24 + kills * concurrency
    assert json.loads((run / "run.json").read_text())["status"] == "completed"


def test_ctrl_c_keeps_calls_in_flight_and_marks_the_run_interrupted(
    units_file: Path, tmp_path: Path
) -> None:
    with FakeOpenAI(latency=0.3) as server:
        run = tmp_path / "runs" / "interrupted"
        process = run_replay_process(
            [
                str(units_file),
                "--model",
                "openai/m",
                "--base-url",
                server.base_url,
                "--out",
                str(run),
                "--no-cache",
                "--concurrency",
                "3",
            ]
        )
        wait_for_lines(run / "results.jsonl", 4, process)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
        sent = server.total
    recorded = records(run)
    assert len(recorded) == sent < 24  # every call that was sent has its record
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
    # What arrived is scored, and the summary says the run is partial.
    assert len((run / "scores.jsonl").read_text().splitlines()) == len(recorded)
    summary_run = json.loads((run / "summary.json").read_text())["run"]
    assert summary_run["status"] == "interrupted" and summary_run["partial"] is True


def test_cache_stats_and_clear(units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    abt(*replay_args(units_file, fake_openai, tmp_path / "runs" / "c", "--limit", "5"))
    cache = tmp_path / "runs" / "cache"
    code, output = abt("cache", "stats", "--cache-dir", cache)
    assert code == 0 and ": 5 answers" in output
    code, output = abt("cache", "clear", "--cache-dir", cache)
    assert code == 0 and "removed 5 answers" in output
    assert "0 answers" in abt("cache", "stats", "--cache-dir", cache)[1]


def test_report_writes_the_page_once_scored_and_prints_the_summary_once(
    units_file: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    run = tmp_path / "reported"
    code, output = abt(*replay_args(units_file, fake_openai, run, "--report"))
    assert code == 0, output
    assert (run / "report.html").exists() and (run / "results.csv").exists()
    assert " ".join(output.split()).count("decided 24 of 24") == 1
    assert "report.html" in "".join(output.splitlines())  # the console wraps long paths
    code, output = abt(
        *replay_args(units_file, fake_openai, tmp_path / "x", "--report", "--no-score")
    )
    assert code == 2 and "--report" in output and not (tmp_path / "x").exists()
