"""The abt command's table of commands: listed without importing them, each loaded when run."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import COMMANDS, Command, Group, app, load_command
from agent_backtest.cli.options import PANELS
from agent_backtest.cli.reference import command_paths, help_text
from agent_backtest.errors import UserError

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]

# What ``abt ARGS`` imports, printed by a fresh interpreter (the test process has it all loaded).
IMPORTS = """
import json, sys
from typer.testing import CliRunner
from agent_backtest.cli.app import app
result = CliRunner().invoke(app, sys.argv[1:])
assert result.exit_code == 0, result.output
print(json.dumps(sorted(sys.modules)))
"""


def imported_by(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS, *args], capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout))


def test_top_level_help_imports_no_command_nor_the_library() -> None:
    modules = imported_by("--help")
    ours = {name for name in modules if name.startswith("agent_backtest")}
    # the package's lazy name tables (agent_backtest.api's __init__ defines no job) and no more
    tables = {"agent_backtest.api", "agent_backtest.exports"}
    assert ours - tables == {"agent_backtest", "agent_backtest.cli", "agent_backtest.cli.app"}
    assert not {"pydantic", "rich", "httpx", "scipy", "yaml"} & modules


@pytest.mark.parametrize("command", ["units", "replay"])
def test_command_help_leaves_heavy_libraries_unimported(command: str) -> None:
    modules = imported_by(command, "--help")
    assert f"agent_backtest.cli.{command}" in modules
    assert not {"httpx", "scipy", "llama_cpp", "playwright", "aiolimiter"} & modules


def test_the_table_says_what_each_command_says_of_itself() -> None:
    for name, entry in COMMANDS.items():
        commands = entry.commands.items() if isinstance(entry, Group) else [(name, entry)]
        for command_name, command in commands:
            loaded = load_command(command_name, command)
            assert loaded.get_short_help_str(limit=10_000) == command.summary, command_name


@pytest.mark.parametrize("path", command_paths(), ids=" ".join)
def test_every_command_turns_a_user_error_into_one_line(
    path: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = COMMANDS[path[0]]
    command = entry.commands[path[1]] if isinstance(entry, Group) else entry
    assert isinstance(command, Command)

    def refuse() -> None:
        raise UserError("no such model", "model")

    module = importlib.import_module(f"agent_backtest.cli.{command.module}")
    monkeypatch.setattr(module, command.function, refuse)
    result = runner.invoke(app, list(path))
    assert result.exit_code == 2
    assert result.stderr == "abt: error: --model: no such model\n"


@pytest.mark.parametrize("path", command_paths(), ids=" ".join)
def test_every_command_help_lists_its_flags_by_panel_and_ends_with_an_example(
    path: tuple[str, ...],
) -> None:
    text = help_text(*path)
    headings = re.findall(r"^(\w[\w ]*):$", text, flags=re.MULTILINE)
    # the panels in their one order, every flag in one (only --help is left for "Options")
    panels = [heading for heading in headings if heading in PANELS]
    assert panels == sorted(panels, key=PANELS.index), path
    assert headings[-2:] == ["Options", "Example"], path
    options = text.split("\nOptions:\n", 1)[1].split("\n\n", 1)[0]
    assert options.split()[0] == "--help" and len(options.splitlines()) == 1, path
    example = text.split("\nExample:\n", 1)[1].split()
    assert example[: 1 + len(path)] == ["abt", *path]
    shipped = [word for word in example if word.startswith("examples/")]
    assert all((ROOT / word).exists() for word in shipped), shipped


def test_groups_list_their_commands_and_run_them(tmp_path) -> None:
    listing = runner.invoke(app, ["cache", "--help"])
    assert "stats  Entries and size of the cache." in listing.stdout
    result = runner.invoke(app, ["cache", "stats", "--cache-dir", str(tmp_path / "c")])
    assert result.exit_code == 0
    assert result.stdout.startswith(f"{tmp_path / 'c' / 'responses.sqlite3'}: 0 answers")


def test_a_mistyped_command_names_the_closest() -> None:
    result = runner.invoke(app, ["repaly"])
    assert result.exit_code == 2
    assert "No such command 'repaly'. Did you mean 'replay'?" in result.stderr


def test_version_is_the_installed_package_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agent_backtest.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == f"abt {importlib.metadata.version('agent-backtest')}\n"
