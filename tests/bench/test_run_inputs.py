"""Mistakes stop ``abt bench run`` with one line and exit 2, before anything is written."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

import pytest

from tests.bench.conftest import abt, lines, scripted, write_benchmark
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.fake_openai(reply=scripted)  # the shop's agent, user and judge

ROOT = Path(__file__).resolve().parents[2]


def run_args(benchmark: Path, config: Path, out: Path, *extra: object) -> list[object]:
    return [
        "bench", "run", benchmark, "--agent", "fake/agent-1", "--user", "scripted",
        "--out", out, "--config", config, "--no-cache", *extra,
    ]  # fmt: skip


def one_error_line(output: str) -> str:
    errors = [line for line in output.splitlines() if line.startswith("abt: error:")]
    assert len(errors) == 1 and "Traceback" not in output, output
    return errors[0]


def test_an_unknown_case_id_is_named_and_nothing_is_written(
    benchmark: Path, config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    code, output = abt(*run_args(benchmark, config, out, "--case-id", "c01", "--case-id", "nope"))
    assert code == 2
    assert "--case-id: 1 unknown case id(s): nope" in one_error_line(output)
    assert not out.exists() and fake_openai.total == 0


def test_chosen_case_ids_run_in_their_order_then_the_shard_then_the_limit(
    config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    benchmark = write_benchmark(tmp_path / "shop", cases=6)
    out = tmp_path / "run"
    ids = ["c05", "c01", "c03", "c04"]
    chosen = [arg for case in ids for arg in ("--case-id", case)]
    code, output = abt(
        *run_args(benchmark, config, out, *chosen, "--shard-count", "2", "--shard-index", "1",
                  "--limit", "1")
    )  # fmt: skip
    assert code == 0, output
    # sorted c01 c03 c04 c05; shard 1 of 2 is c03, c05; the limit keeps c03
    assert [e["case_id"] for e in lines(out / "episodes.jsonl")] == ["c03"]
    assert json.loads((out / "run.json").read_text())["selection"]["selected"] == ["c03"]


def test_gold_without_rows_for_some_cases_names_the_first_ten(
    config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    benchmark = write_benchmark(tmp_path / "shop", cases=13, gold_cases=1)
    out = tmp_path / "run"
    code, output = abt(*run_args(benchmark, config, out))
    assert code == 2
    line = one_error_line(output)
    assert (
        "no gold for 12 case(s): c01, c02, c03, c04, c05, c06, c07, c08, c09, c10 and 2 more"
        in line
    )
    assert "c11" not in line
    # the rollouts are kept (grading reads the gold only after them): a resume grades them
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["status"] == "failed" and "no gold for 12" in manifest["grading_error"]
    assert len(lines(out / "episodes.jsonl")) == 13 and not (out / "grades.jsonl").exists()
    write_benchmark(tmp_path / "fixed", cases=13)
    (benchmark / "gold.jsonl").write_bytes((tmp_path / "fixed" / "gold.jsonl").read_bytes())
    calls = fake_openai.total
    code, output = abt("bench", "run", "--resume", out, "--config", config)
    assert code == 0, output
    assert fake_openai.total == calls  # nothing rolled out again
    assert len(lines(out / "grades.jsonl")) == 13
    assert json.loads((out / "run.json").read_text())["status"] == "completed"


def test_a_missing_gold_file_stops_the_run_before_it_starts(
    benchmark: Path, config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    (benchmark / "gold.jsonl").unlink()
    out = tmp_path / "run"
    code, output = abt(*run_args(benchmark, config, out))
    assert code == 2 and "gold.jsonl: missing" in one_error_line(output)
    assert not out.exists() and fake_openai.total == 0


def test_a_non_empty_out_dir_is_refused_and_left_as_it_was(
    benchmark: Path, config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    code, output = abt(*run_args(benchmark, config, out))
    assert code == 2 and "--out: " in one_error_line(output) and "is not empty" in output
    assert [p.name for p in out.iterdir()] == ["notes.txt"] and fake_openai.total == 0


def test_an_empty_out_dir_is_used(
    benchmark: Path, config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    out.mkdir(mode=0o755)
    code, output = abt(*run_args(benchmark, config, out))
    assert code == 0, output
    assert len(lines(out / "grades.jsonl")) == 3
    assert stat.S_IMODE(out.stat().st_mode) == 0o700


def test_a_git_commit_that_is_not_the_checkouts_is_refused(
    benchmark: Path,
    config: Path,
    fake_openai: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    monkeypatch.setenv("GIT_COMMIT", "0" * 40 if not head.startswith("0") else "1" * 40)
    out = tmp_path / "run"
    code, output = abt(*run_args(benchmark, config, out))
    assert code == 2 and "GIT_COMMIT is" in one_error_line(output) and head in output
    assert not out.exists() and fake_openai.total == 0
    monkeypatch.setenv("GIT_COMMIT", head[:12])
    code, output = abt(*run_args(benchmark, config, out))
    assert code == 0, output
    assert json.loads((out / "run.json").read_text())["git_commit"] == head[:12]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "cases.jsonl: line 2: not JSON"),
        (
            '{"id": "c00", "instruction": "x"}',
            "cases.jsonl: line 2: case id 'c00' is on line 1 too",
        ),
        ('{"id": "x", "instructions": "typo"}', "cases.jsonl: line 2: not a case: instructions"),
        ('{"id": "x"}', "cases.jsonl: line 2: a case needs an instruction or opening messages"),
        (
            '{"id": "x", "messages": [{"role": "robot"}]}',
            "line 2: messages[0]: unknown message role",
        ),
    ],
)
def test_a_bad_case_line_is_named_by_its_number(
    line: str, message: str, config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    benchmark = write_benchmark(tmp_path / "shop", cases=1)
    with (benchmark / "cases.jsonl").open("a") as handle:
        handle.write(line + "\n")
    out = tmp_path / "run"
    code, output = abt(*run_args(benchmark, config, out))
    assert code == 2 and message in one_error_line(output), output
    assert not out.exists()


def test_a_rubric_without_a_judge_and_an_unknown_grader_are_refused(
    config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    rubric = write_benchmark(tmp_path / "a", graders=("rubric",))
    code, output = abt(*run_args(rubric, config, tmp_path / "run"))
    assert code == 2 and "--judge: the benchmark grades rubric items" in one_error_line(output)
    unknown = write_benchmark(tmp_path / "b", graders=("nonsense",))
    code, output = abt(*run_args(unknown, config, tmp_path / "run"))
    assert code == 2 and "unknown grader 'nonsense'" in one_error_line(output)
    absent = write_benchmark(tmp_path / "c", environment="tests.bench.nowhere:Shop")
    code, output = abt(*run_args(absent, config, tmp_path / "run"))
    assert code == 2 and "cannot import tests.bench.nowhere" in one_error_line(output)
    assert not (tmp_path / "run").exists() and fake_openai.total == 0


def test_a_judge_that_is_the_agent_is_refused(
    benchmark: Path, config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    code, output = abt(*run_args(benchmark, config, tmp_path / "run", "--judge", "fake/agent-1"))
    assert code == 2 and "--judge: " in one_error_line(output)
    assert not (tmp_path / "run").exists()
