"""Every command's --help starts light: it loads the command line and the option groups, never
the machinery behind the jobs (models, clients, event loops, the readers and engines).

Each help runs in a fresh interpreter through the real entry point, which then reports every
module it imported; nothing is timed, so the check holds on any machine.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agent_backtest.cli.app import COMMANDS, Group
from agent_backtest.cli.reference import command_paths
from agent_backtest.cli.schema import RECORD_NAMES

# Runs ``abt ARGS`` as the console script does, then prints the modules it imported.
HELP_THEN_MODULES = """
import json, sys
from agent_backtest.cli import main
sys.argv = ["abt", *sys.argv[1:]]
try:
    main()
except SystemExit as done:
    assert done.code in (0, None), done.code
print("\\n" + json.dumps(sorted(sys.modules)))
"""

# Libraries a help has no use for: pydantic (the records, and typer's coercion of a value it
# was not given), HTTP clients and servers, the event loop, YAML, prices, rich's live parts.
HEAVY_LIBRARIES = {
    *("pydantic", "pydantic_core", "httpx", "h11", "http.server", "ssl", "asyncio"),
    *("yaml", "genai_prices", "sqlite3", "scipy", "numpy", "rich.progress", "rich.table"),
}
# The package's machinery: what the jobs run on. A help may load the lazy name tables of these
# packages and the few light modules listed, nothing else of them.
MACHINERY = (
    *("trace", "formats", "units", "providers", "runs", "replaying", "scoring", "simulate"),
    *("bench", "episodes", "executors", "patch", "profiling", "backends", "reporting"),
)
LIGHT = {
    *("units", "units.selection", "runs", "runs.files", "replaying", "replaying.events"),
    *("backends", "reporting", "reporting.bars", "reporting.figures"),
    *("bench", "bench.run_options"),  # plain dataclasses: what a bench run is asked to run
}


def help_paths() -> list[tuple[str, ...]]:
    """``()`` for ``abt --help``, every group, and every command of the app."""
    groups = [(name,) for name, entry in COMMANDS.items() if isinstance(entry, Group)]
    return [(), *groups, *command_paths()]


def modules_imported_by(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", HELP_THEN_MODULES, *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize("path", help_paths(), ids=lambda path: " ".join(path) or "abt")
def test_help_loads_no_machinery(path: tuple[str, ...]) -> None:
    modules = modules_imported_by(*path, "--help")
    assert not HEAVY_LIBRARIES & modules
    ours = {name.removeprefix("agent_backtest.") for name in modules}
    machinery = {name for name in ours if name.split(".")[0] in MACHINERY}
    assert machinery - LIGHT == set()


def test_running_a_command_loads_what_it_runs_on() -> None:
    # the check above can fail: a command run (not its help) loads pydantic and its job
    modules = modules_imported_by("schema", "summary")
    assert {"pydantic", "agent_backtest.api.schemas"} <= modules


def test_schema_lists_every_record_the_api_knows_in_its_order() -> None:
    from agent_backtest.api.schemas import RECORDS

    assert RECORD_NAMES == tuple(RECORDS)
