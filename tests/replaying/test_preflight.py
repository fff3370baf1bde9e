"""Every check of ``abt replay`` runs before anything is written or sent, and a run says how it
ended: each failure here leaves no run directory and exits 2 with one line naming the flag."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.conftest import TAU_TOOLS, TAU_TRAJECTORIES
from tests.fake_openai import FakeOpenAI
from tests.processes import wait_for_lines
from tests.replaying.test_replay_cli import (
    SECRET,
    abt,
    records,
    run_replay_process,
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # no stray abt.toml


def flat(output: str) -> str:
    """Terminal output with its line wrapping undone."""
    return " ".join(output.split())


def refused(args: list[object], out: Path) -> str:
    """Run ``abt replay``; it must exit 2 with one line and leave no directory behind."""
    code, output = abt("replay", *args, "--out", out)
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("abt: error: "), output
    assert "Traceback" not in output
    assert not out.exists(), f"{out} was left behind"
    return lines[0]


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "abt.toml"
    path.write_text(text)
    return path


def test_a_missing_key_names_the_model_flag_and_the_variable(
    units_file: Path, tmp_path: Path
) -> None:
    line = refused([units_file, "--model", "openai/gpt-4.1-mini"], tmp_path / "runs" / "a")
    assert line.startswith("abt: error: --model: no key for openai: set OPENAI_API_KEY")


def test_an_unknown_provider_names_the_fix(units_file: Path, tmp_path: Path) -> None:
    line = refused([units_file, "--model", "nope/some-model"], tmp_path / "runs" / "a")
    assert "--model: unknown provider 'nope'" in line
    assert "add [providers.nope] with type and base_url" in line


def test_an_unknown_local_model_is_refused(units_file: Path, tmp_path: Path) -> None:
    line = refused([units_file, "--model", "local/no-such-model"], tmp_path / "runs" / "a")
    assert "--model: unknown local model 'no-such-model'; local models: local/smollm2" in line


def test_model_trace_without_an_alias_leaves_nothing(units_file: Path, tmp_path: Path) -> None:
    line = refused([units_file, "--model", "trace"], tmp_path / "runs" / "a")
    assert line.startswith("abt: error: --model: trace: the recorded model 'gpt-4o' names no")
    assert '[aliases] "gpt-4o" = "openai/gpt-4o"' in line


def test_model_trace_checks_the_key_of_every_recorded_model(
    units_file: Path, tmp_path: Path
) -> None:
    config = write_config(tmp_path, '[aliases]\n"gpt-4o" = "openai/gpt-4o"\n')
    line = refused([units_file, "--model", "trace", "--config", config], tmp_path / "runs" / "a")
    assert "--model: no key for openai: set OPENAI_API_KEY" in line


def test_a_provider_without_base_url_is_a_line_not_a_traceback(
    units_file: Path, tmp_path: Path
) -> None:
    config = write_config(tmp_path, '[providers.vllm]\ntype = "openai"\napi_key_env = ""\n')
    line = refused(
        [units_file, "--model", "vllm/qwen", "--config", config], tmp_path / "runs" / "a"
    )
    assert "--model: vllm/qwen: provider 'vllm' has no base_url: set base_url in " in line
    assert "[providers.vllm]" in line


def test_a_bad_fallback_judge_is_refused_before_the_replay(
    units_file: Path, tmp_path: Path
) -> None:
    with FakeOpenAI() as server:
        line = refused(
            [
                units_file,
                "--model",
                "mock/golden",
                "--judge",
                "mock/golden",
                "--fallback-judge",
                "nope",
            ],
            tmp_path / "runs" / "a",
        )
        assert server.total == 0
    assert line.startswith("abt: error: --fallback-judge: 'nope' is not provider/model")


def test_a_judge_that_is_a_recorded_model_is_refused_with_model_trace(
    units_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    config = write_config(tmp_path, '[aliases]\n"gpt-4o" = "openai/gpt-4o"\n')
    line = refused(
        [units_file, "--model", "trace", "--config", config, "--judge", "openai/gpt-4o"],
        tmp_path / "runs" / "a",
    )
    assert line.startswith(
        "abt: error: --judge: the judge openai/gpt-4o is the candidate model openai/gpt-4o"
    )


def test_a_judge_missing_its_key_is_refused_before_the_replay(
    units_file: Path, tmp_path: Path
) -> None:
    line = refused(
        [units_file, "--model", "mock/golden", "--judge", "anthropic/claude-sonnet-4-5"],
        tmp_path / "runs" / "a",
    )
    assert line.startswith("abt: error: --judge: no key for anthropic: set ANTHROPIC_API_KEY")


def test_a_broken_config_file_is_refused(units_file: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, "[providers.x]\ntype = 'grpc'\n")
    line = refused(
        [units_file, "--model", "mock/golden", "--config", config], tmp_path / "runs" / "a"
    )
    assert line.startswith(f"abt: error: {config}: providers.x.type: Input should be")


def test_an_output_that_is_a_file_is_refused(units_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "taken"
    out.write_text("not a run")
    code, output = abt("replay", units_file, "--model", "mock/golden", "--out", out)
    assert code == 2 and "--out: " in output and "is a file" in output
    assert out.read_text() == "not a run"


def test_an_unreachable_endpoint_ends_failed_with_the_error_kind_and_message(
    units_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    run = tmp_path / "runs" / "down"
    code, output = abt(
        "replay",
        units_file,
        "--model",
        "openai/m",
        "--base-url",
        f"http://127.0.0.1:{port}/v1",
        "--out",
        run,
        "--limit",
        "3",
        "--max-retries",
        "0",
        "--no-cache",
    )
    assert code == 1, output
    assert "status failed connection: ConnectError" in flat(output)
    assert "the run failed: no answer arrived" in flat(output)
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["status"] == "failed"
    assert list(manifest["error_examples"]) == ["connection"]
    assert SECRET not in (run / "run.json").read_text()
    assert not (run / "scores.jsonl").exists()  # nothing could be scored


def test_a_run_with_some_errors_is_completed_with_errors(
    units_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAI() as server:
        first = json.loads(units_file.read_text().splitlines()[0])
        last_text = first["request"]["messages"][-1]["content"]
        server.faults[last_text] = ["500"] * 10
        run = tmp_path / "runs" / "some"
        code, output = abt(
            "replay", units_file, "--model", "openai/m", "--base-url", server.base_url,
            "--out", run, "--limit", "4", "--max-retries", "0", "--no-cache",
        )  # fmt: skip
    assert code == 0, output
    assert "status completed_with_errors http_5xx: HTTP 500" in flat(output)
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["status"] == "completed_with_errors"
    assert manifest["error_examples"]["http_5xx"].startswith("HTTP 500")


def test_units_that_time_out_on_every_repeat_are_listed(
    units_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAI(slow_seconds=2.0) as server:
        first = json.loads(units_file.read_text().splitlines()[0])
        server.faults[first["request"]["messages"][-1]["content"]] = ["slow"] * 10
        run = tmp_path / "runs" / "slow"
        code, output = abt(
            "replay", units_file, "--model", "openai/m", "--base-url", server.base_url,
            "--out", run, "--limit", "2", "--timeout", "0.3", "--no-cache",
        )  # fmt: skip
    assert code == 0, output
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["timed_out_units"] == [first["unit_id"]]
    assert "1 units timed out on every repeat" in flat(output) and "--timeout" in output


def test_a_second_writer_of_one_run_is_refused_at_once(
    units_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAI() as server:
        run = tmp_path / "runs" / "locked"
        args = [
            "--model", "openai/m", "--base-url", server.base_url, "--no-cache",
            "--concurrency", "1",
        ]  # fmt: skip
        code, _ = abt("replay", units_file, *args, "--out", run, "--dry-run")
        assert code == 0
        server.hold(after=1)  # the first waits on its second answer until the second is done
        first = run_replay_process(["--resume", str(run)])
        wait_for_lines(run / "results.jsonl", 1, first)  # it holds the lock now
        code, output = abt("replay", "--resume", run)
        assert first.poll() is None  # refused at once, not after the first finishes
        assert code == 2
        assert f"is being written by process {first.pid} (resume)" in flat(output)
        server.release()
        assert first.wait(timeout=120) == 0
    assert len(records(run)) == 24  # the refused resume sent nothing twice
    assert server.total == 24


def test_a_killed_run_keeps_the_call_counts_it_had_saved(units_file: Path, tmp_path: Path) -> None:
    with FakeOpenAI(latency=0.3) as server:
        run = tmp_path / "runs" / "counted"
        process = run_replay_process(
            [
                str(units_file), "--model", "openai/m", "--base-url", server.base_url,
                "--out", str(run), "--no-cache", "--concurrency", "1",
            ]
        )  # fmt: skip
        wait_for_lines(run / "results.jsonl", 8, process)  # well past the first save
        process.kill()
        process.wait()
    counts = json.loads((run / "run.json").read_text())["counts"]["candidate"]
    assert 1 <= counts["calls"] <= len(records(run)) + 1


def test_labels_are_recorded_and_carried_into_summary_and_csv(
    units_file: Path, tmp_path: Path
) -> None:
    run = tmp_path / "runs" / "labelled"
    code, output = abt(
        "replay", units_file, "--model", "mock/golden", "--out", run, "--limit", "3",
        "--label", "team=search", "--label", "agent=v2",
    )  # fmt: skip
    assert code == 0, output
    expected = {"team": "search", "agent": "v2"}
    assert json.loads((run / "run.json").read_text())["labels"] == expected
    assert json.loads((run / "summary.json").read_text())["labels"] == expected
    assert abt("report", run)[0] == 0
    header = (run / "results.csv").read_text().splitlines()[0].split(",")
    assert {"label.team", "label.agent"} <= set(header)
    line = refused([units_file, "--model", "mock/golden", "--label", "team"], tmp_path / "x")
    assert line == "abt: error: --label: 'team' is not KEY=VALUE"


def test_scores_made_as_answers_land_equal_a_scoring_after_the_run(
    units_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAI() as server:
        run = tmp_path / "runs" / "live"
        code, output = abt(
            "replay", units_file, "--model", "openai/m", "--base-url", server.base_url,
            "--out", run, "--k", "2", "--concurrency", "6", "--no-cache",
        )  # fmt: skip
    assert code == 0, output
    live = (run / "scores.jsonl").read_bytes(), (run / "summary.json").read_bytes()
    assert len(live[0].splitlines()) == 48
    assert abt("score", run)[0] == 0  # the same settings: the same scoring id, rewritten
    assert ((run / "scores.jsonl").read_bytes(), (run / "summary.json").read_bytes()) == live


def test_a_replay_of_traces_prints_and_records_what_the_readers_could_not_use(
    tmp_path: Path,
) -> None:
    run = tmp_path / "runs" / "read"
    code, output = abt(
        "replay", TAU_TRAJECTORIES, "--tools", TAU_TOOLS, "--recorded-model", "gpt-4o",
        "--model", "mock/golden", "--out", run, "--limit", "2",
    )  # fmt: skip
    assert code == 0, output
    assert "read 100 sessions, 2 units selected · LLM steps that gave no unit: none" in flat(output)
    readers = json.loads((run / "run.json").read_text())["readers"]
    assert readers == {
        "sessions": 100, "skipped_steps": {}, "skipped_records": {}, "duplicate_sessions": 0
    }  # fmt: skip
