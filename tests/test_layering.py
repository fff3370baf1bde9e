"""The package's layering rules hold: each package imports only from the layers it stands on."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "agent_backtest"
GROUND = {
    "bounded_yaml",
    "distributions",
    "errors",
    "exports",
    "input_files",
    "plugins",
    "record_model",
    "redaction",
    "registry",
    "statistics",
    "trace",
}
# What each part may import from the rest of the package (besides itself and the ground floor).
ALLOWED: dict[str, set[str]] = {
    "trace": set(),
    "formats": set(),
    "units": {"formats"},
    "patch": {"units", "providers", "runs"},
    "providers": set(),
    "runs": {"units", "providers"},
    "episodes": {"providers"},
    "executors": {"episodes", "providers"},
    "replaying": {"formats", "units", "patch", "providers", "runs", "executors"},
    "scoring": {"units", "providers", "runs", "episodes"},
    "reporting": {"units", "runs"},
    "backends": {"runs"},
    "profiling": {"formats", "runs"},
    "bench": {
        *("formats", "units", "providers", "runs", "scoring", "reporting"),
        *("episodes", "executors"),
    },
    "simulate": {
        *("formats", "units", "providers", "runs", "scoring", "reporting"),
        *("episodes", "executors"),
    },
}


def imports_of(part: str) -> set[str]:
    """The top-level parts of agent_backtest that ``part`` imports."""
    root = PACKAGE / part
    files = [root.with_suffix(".py")] if root.with_suffix(".py").exists() else root.rglob("*.py")
    found = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if name.startswith("agent_backtest."):
                    found.add(name.split(".")[1])
    return found - {part}


@pytest.mark.parametrize("part", sorted(ALLOWED))
def test_each_part_imports_only_the_layers_it_stands_on(part: str) -> None:
    assert imports_of(part) - GROUND - ALLOWED[part] == set()


def test_the_ground_floor_imports_nothing_above_it() -> None:
    for part in ("distributions", "errors", "exports", "record_model", "redaction"):
        assert imports_of(part) == set(), part
    assert imports_of("statistics") == {"distributions"}
    assert imports_of("plugins") == {"errors"}
    assert imports_of("registry") == {"errors", "plugins"}
    assert imports_of("trace") <= {"errors", "redaction"}  # the floor: nothing above it
    # the limits every reader shares: a module of formats that imports no reader
    assert imports_of("bounded_yaml") == {"errors", "formats"}
    assert imports_of("input_files") == {"bounded_yaml", "errors", "formats"}
    assert imports_of("formats/limits") == {"errors"}


# What the command line may import besides the API, the errors and itself, each with its reason.
CLI_EXCEPTIONS: dict[str, str] = {
    "agent_backtest.reporting.figures": "how a figure reads (a rate, its interval, a p-value): "
    "one rule for the terminal and for the reports the jobs write",
    "agent_backtest.runs.files": "a command's output file (-o) is written as every file of the "
    "package is: private to its owner, and in place only once whole",
}


def runtime_imports(path: Path) -> set[str]:
    """The agent_backtest modules a file imports when it runs: every import but those under
    ``if TYPE_CHECKING:``, which name types for annotations and load nothing."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    checking = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in checking:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            names = (
                [node.module]
                if node.module != "agent_backtest"
                else [f"agent_backtest.{alias.name}" for alias in node.names]
            )
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found |= {name for name in names if name.startswith("agent_backtest")}
    return found


def cli_may_import(module: str) -> bool:
    """The API (and what the package's top level exports of it), the errors, the command line's
    own modules, and the listed exceptions."""
    import agent_backtest

    parts = module.split(".")
    if len(parts) == 1:
        return True  # the package itself: its lazy exports, the API's names
    top_level = len(parts) == 2 and parts[1] in (*agent_backtest.__all__, "__version__")
    return top_level or parts[1] in ("api", "cli", "errors") or module in CLI_EXCEPTIONS


@pytest.mark.parametrize("path", sorted((PACKAGE / "cli").glob("*.py")), ids=lambda p: p.name)
def test_the_command_line_prints_from_the_api(path: Path) -> None:
    assert {m for m in runtime_imports(path) if not cli_may_import(m)} == set()


def test_the_exceptions_are_still_needed() -> None:
    used = set().union(*(runtime_imports(path) for path in (PACKAGE / "cli").glob("*.py")))
    assert set(CLI_EXCEPTIONS) <= used


def test_the_api_does_not_import_the_command_line() -> None:
    assert "cli" not in imports_of("api")
