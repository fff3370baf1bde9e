"""The package's layering rules hold: each package imports only from the layers it stands on."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "agent_backtest"
GROUND = {
    "distributions",
    "errors",
    "exports",
    "plugins",
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
    for part in ("distributions", "errors", "exports", "redaction"):
        assert imports_of(part) == set(), part
    assert imports_of("statistics") == {"distributions"}
    assert imports_of("plugins") == {"errors"}
    assert imports_of("registry") == {"errors", "plugins"}
    assert imports_of("trace") <= {"errors", "redaction"}  # the floor: nothing above it
