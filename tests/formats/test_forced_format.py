"""``--format`` forced on a file of another format stops with one line, never a silent run."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.errors import InputError
from agent_backtest.formats import ReadOptions, SessionStream

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SESSION_STEPS = FIXTURES / "session_steps" / "example.json"
CHAT_LOG = FIXTURES / "chat_log" / "example.jsonl"
TAU = FIXTURES / "tau_airline" / "two_trajectories.json"


def read(path: Path, format: str) -> int:
    """How many sessions ``format`` reads from ``path``."""
    return sum(1 for _ in SessionStream([path], ReadOptions(), format))


@pytest.mark.parametrize(
    ("format", "path", "holds"),
    [
        ("tau_bench", SESSION_STEPS, "session_steps"),
        ("session_steps", TAU, "tau_bench"),
        ("canonical", CHAT_LOG, "chat_log"),
    ],
)
def test_a_format_that_reads_nothing_names_what_it_expects_and_what_the_file_is(
    format: str, path: Path, holds: str
) -> None:
    with pytest.raises(InputError) as caught:
        read(path, format)
    message = str(caught.value)
    assert caught.value.location == f"--format {format}"
    assert message.startswith(f"{path}: --format {format}: expects ")
    assert f"the file looks like {holds}: leave out --format or pass --format {holds}" in message
    assert "\n" not in message


def test_the_expectation_says_what_the_format_holds() -> None:
    with pytest.raises(InputError) as caught:
        read(SESSION_STEPS, "tau_bench")
    expected = "expects τ-bench trajectory files: a list of {task_id, trial, reward"
    assert expected in str(caught.value)


def test_a_file_of_no_known_format_is_named_so(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text('{"note": "not a trace"}\n')
    with pytest.raises(InputError) as caught:
        read(path, "canonical")
    assert str(caught.value).endswith("nothing was read, the file is in no format abt reads")


def test_the_right_format_forced_reads_as_detected() -> None:
    assert read(TAU, "tau_bench") == read(TAU, None) == 2


def test_a_file_of_the_format_with_nothing_usable_is_not_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty_log.jsonl"
    path.write_text('{"request": {"messages": []}, "response": {"error": {"type": "x"}}}\n')
    assert read(path, "chat_log") == 0  # the skips say why; the format is right


def test_the_command_exits_2_with_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["units", "--format", "tau_bench", str(SESSION_STEPS), "-o", str(tmp_path / "u")]
    )
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--format tau_bench: expects" in lines[0]
    assert not (tmp_path / "u").exists()
