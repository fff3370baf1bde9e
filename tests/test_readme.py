"""The README's command reference is what the commands print."""

from __future__ import annotations

from pathlib import Path

from agent_backtest.cli.reference import BEGIN, END, render

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
