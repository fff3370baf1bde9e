"""Every wrong command line is one ``abt: error:`` line and exit code 2, and leaves no run
directory behind: click's range and choice mistakes, numbers past their bound, flags a resume
would ignore, outputs and caches that cannot be written (found before anything is paid for),
names holding control characters, and values too long to print.

Each line runs ``abt`` as a real process in a folder of its own that holds a units file, a
finished run (``done``) and a plain file (``taken``); ``RUN`` is the run directory a command
would make, checked absent afterwards.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_mistakes import abt
from tests.conftest import ROOT, write_tau_units

pytestmark = pytest.mark.long

DEMO = ROOT / "examples" / "demo_agent"
TRACES = ROOT / "examples" / "tau_airline" / "gpt-4o-airline-tasks-00-24.json"
MOCK = ["replay", "units.jsonl", "--model", "mock/golden", "--out", "RUN", "--no-cache"]
GENERATE = ["simulate", "generate", DEMO / "capabilities.yaml", "--tools", DEMO / "tools.json",
            "--per-family", "1", "--teacher", "openai/gpt-4.1"]  # fmt: skip
LONG_FIND = "x" * 8_000_000

CASES: list[tuple[str, list[object], str]] = [
    ("range", ["units", TRACES, "--limit", "-1"], "--limit: Input should be greater"),
    ("choice", ["units", TRACES, "--steps", "some"], "--steps: "),
    ("missing", ["score"], "missing argument 'RUN'"),
    ("not a number", ["score", "done", "--workers", "abc"], "--workers: "),
    ("huge k", [*MOCK, "--k", "99999999999999999999"], "--k: "),
    ("huge concurrency", [*MOCK, "--concurrency", "99999999999999999999"], "--concurrency: "),
    ("huge limit", [*MOCK, "--limit", "99999999999999999999"], "--limit: "),
    ("huge timeout", [*MOCK, "--timeout", "1e309"], "--timeout: "),
    ("huge seed", [*MOCK, "--seed", "-99999999999999999999"], "--seed: "),
    ("huge simulate k", ["simulate", "run", "flows", "--k", "5000"], "--k: "),
    ("resume dry run", ["replay", "--resume", "done", "--dry-run"], "--dry-run: does nothing"),
    ("resume overwrite", ["replay", "--resume", "done", "--overwrite"], "--overwrite: does"),
    ("resume limit", ["replay", "--resume", "done", "--limit", "3"], "--limit: does nothing"),
    ("resume k", ["replay", "--resume", "done", "--k", "3"], "--k: does nothing"),
    ("resume tools", ["replay", "--resume", "done", "--tools", "t.json"], "--tools: does"),
    ("resume config", ["replay", "--resume", "done", "--config", "abt.toml"], "--config: does"),
    ("resume no cache", ["replay", "--resume", "done", "--no-cache"], "--no-cache: a run you"),
    ("resume cache dir", ["replay", "--resume", "done", "--cache-dir", "c"], "--cache-dir: a run"),
    ("cache dir", [*MOCK[:-1], "--cache-dir", "/proc/abt-cache"], "--cache-dir: cannot open"),
    ("cache dir a file", [*MOCK[:-1], "--cache-dir", "taken"], "--cache-dir: "),
    ("compare out a file", ["compare", "done", "done", "--out", "taken"], "--out: taken is a file"),
    ("compare out", ["compare", "done", "done", "--out", "/proc/abt-cmp"], "--out: cannot write"),
    ("show unit", ["show", "units.jsonl", "--unit", "nosuch"], "no matching unit"),
    ("profile out", ["profile", TRACES, "-o", "/proc/abt/p.json"], "--output: cannot write"),
    ("generate out", [*GENERATE, "--out", "/proc/flows.jsonl"], "--out: cannot write"),
    ("generate out in a file", [*GENERATE, "--out", "taken/f.jsonl"], "--out: cannot write"),
    ("newline", ["score", "no-such\nabt: error: forged"], "no-such\\nabt: error: forged"),
    ("escape", ["score", "run\x1b[2J\x07"], "run\\x1b[2J\\x07"),
    ("long find", [*MOCK, "--patch", "long.yaml"], "…"),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mistakes")
    write_tau_units(folder / "units.jsonl", limit=4)
    (folder / "taken").write_text("a file")
    (folder / "long.yaml").write_text(
        'schema: abt.patch/1\nops:\n  - {id: long, target: system, action: replace, find: "'
        + LONG_FIND
        + '", replace: "y"}\n'
    )
    done = abt(folder, "replay", "units.jsonl", "--model", "mock/golden", "--out", "done",
               "--no-cache")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.parametrize(("args", "expected"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])  # fmt: skip
def test_a_bad_command_line_is_one_line_and_exit_2(
    folder: Path, args: list[object], expected: str
) -> None:
    before = sorted(path.name for path in folder.iterdir())
    result = abt(folder, *args)
    assert result.returncode == 2, result.stderr[:2000]
    assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr[:2000]
    assert result.stderr.startswith("abt: error: ") and expected in result.stderr, result.stderr
    assert len(result.stderr) < 1200  # a long value is cut, never printed whole
    assert sorted(path.name for path in folder.iterdir()) == before  # no run directory left


def test_a_run_whose_name_holds_a_newline_is_named_on_one_line(folder: Path) -> None:
    """What score and report print name the run's files on one line each, the newline shown
    as its escape."""
    import shutil

    named = folder / "run\nabt: error: forged"
    shutil.copytree(folder / "done", named)
    try:
        for command in ("score", "report"):
            result = abt(folder, command, named.name)
            assert result.returncode == 0, result.stderr
            lines = (result.stdout + result.stderr).splitlines()
            assert not any(line.startswith("abt: error: forged") for line in lines), lines
            assert any("run\\nabt: error: forged" in line for line in lines), lines
    finally:
        shutil.rmtree(named)


@pytest.mark.parametrize(
    "command",
    [
        ["units", TRACES, "-o", "FILE"],
        ["ingest", TRACES, "-o", "FILE"],
        ["profile", TRACES, "-o", "FILE"],
        ["replay", "units.jsonl", "--model", "mock/golden", "--no-cache", "--out", "FILE",
         "--report"],
    ],
    ids=["units", "ingest", "profile", "replay"],
)  # fmt: skip
def test_an_output_whose_name_holds_a_newline_is_named_on_one_line(
    folder: Path, command: list[object]
) -> None:
    """The line saying where a command wrote shows a newline in the name as its escape, so a
    file name cannot forge a second line."""
    name = f"{command[0]}-out\nabt: error: forged"
    result = abt(folder, *(name if part == "FILE" else part for part in command))
    assert result.returncode == 0, result.stderr
    lines = (result.stdout + result.stderr).splitlines()
    assert not any(line.startswith("abt: error: forged") for line in lines), lines
    assert any("-out\\nabt: error: forged" in line for line in lines), lines
