"""A mistake in the command line itself (a flag that does not exist, a value of the wrong type
or out of range, a missing argument, an unknown command) is one line and exit code 2 from the
real ``abt`` process, as every other user mistake is: never click's usage block."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

CASES = [
    (["score", "--workers", "abc"], "abt: error: --workers: Input should be a valid integer"),
    (["score"], "abt: error: missing argument 'RUN'"),
    (["replay", "x", "--concurrency", "0"], "abt: error: --concurrency: Input should be greater"),
    (["bench", "run", "tau_airline", "--k", "9"], "abt: error: no such option: --k (see abt bench"),
    (["nosuchcmd"], "abt: error: no such command 'nosuchcmd' (see abt --help)"),
    (["bench", "run", "tau_airline", "--rollouts", "0"], "abt: error: --rollouts: Input should"),
    (["replay", "x", "--k", "99999999999999999999"], "abt: error: --k: "),
    (["replay", "--resume", "run", "--dry-run"], "abt: error: --dry-run: does nothing to a run"),
    (["replay", "--resume", "run", "--overwrite"], "abt: error: --overwrite: does nothing to a"),
]


def abt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_backtest.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


@pytest.mark.parametrize(("args", "line"), CASES)
def test_a_wrong_command_line_is_one_line_and_exit_2(args: list[str], line: str) -> None:
    done = abt(*args)
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(line), done.stderr


def test_an_output_that_cannot_be_written_is_one_line() -> None:
    trajectories = "examples/tau_airline/gpt-4o-airline-tasks-00-24.json"
    done = abt("profile", trajectories, "-o", "/proc/no-such-folder/profile.json")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("abt: error: --output: cannot write"), done.stderr


def test_a_newline_in_a_name_cannot_forge_a_second_error_line() -> None:
    done = abt("score", "no-such-run\nabt: error: forged")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "abt: error: forged" not in done.stderr.splitlines()


def test_help_still_exits_0() -> None:
    done = abt("score", "--help")
    assert done.returncode == 0 and "Usage: abt score" in done.stdout
