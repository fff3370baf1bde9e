"""The README is the short front door: its set-up commands, its links and its Python example."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from agent_backtest.runs.run import Run

README = Path(__file__).resolve().parent.parent / "README.md"
MAX_LINES = 300


def test_readme_opens_with_the_two_set_up_commands() -> None:
    blocks = README.read_text(encoding="utf-8").split("```sh\n")[1:3]
    commands = [block.split("\n```", 1)[0] for block in blocks]
    assert "abt replay examples/tau_airline" in commands[0]
    assert "pytest" in commands[1]


def test_readme_is_read_in_five_minutes() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines: move detail into docs/"


def test_every_link_of_the_readme_leads_to_a_file() -> None:
    text = README.read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]
    assert any(t.startswith("docs/") for t in targets)
    missing = [t for t in targets if not (README.parent / t.split("#", 1)[0]).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


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
