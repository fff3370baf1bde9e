"""The README's command reference is what the commands print."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent_backtest.cli.reference import BEGIN, END, render
from agent_backtest.runs.run import Run

README = Path(__file__).resolve().parent.parent / "README.md"


def test_command_reference_matches_help_output() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index(BEGIN) : text.index(END) + len(END)]
    assert section == render(), (
        "README command reference is stale: run python -m agent_backtest.cli.reference README.md"
    )


def test_readme_opens_with_the_two_set_up_commands() -> None:
    blocks = README.read_text(encoding="utf-8").split("```sh\n")[1:3]
    commands = [block.split("\n```", 1)[0] for block in blocks]
    assert "abt replay examples/tau_airline" in commands[0]
    assert "pytest" in commands[1]


@pytest.mark.local_model
def test_the_python_example_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = README.read_text(encoding="utf-8")
    snippet = text.split("```python\n", 1)[1].split("\n```", 1)[0]
    shutil.copytree(README.parent / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    exec(compile(snippet, "README.md", "exec"), {})
    run = Run(tmp_path / "runs" / "python-demo")
    assert run.status in ("completed", "completed_with_errors")
    assert len(list(run.results())) == 2
    assert (run.path / "report.html").exists()
