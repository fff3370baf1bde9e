"""BFCL's questions and possible answers, read from the installed ``bfcl-eval`` package."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import orjson

from agent_backtest.errors import UserError

__all__ = ["Question", "data_directory", "package_version", "read_questions"]

INSTALL = "install it with: pip install --no-deps bfcl-eval"


@dataclass(frozen=True)
class Question:
    """One BFCL question: its messages, its functions and the acceptable calls."""

    category: str
    id: str
    messages: list[dict[str, Any]]
    functions: list[dict[str, Any]]
    ground_truth: list[dict[str, dict[str, Any]]]


def package_version() -> str:
    """The installed bfcl-eval's version, or a UserError saying how to install it."""
    try:
        return version("bfcl-eval")
    except PackageNotFoundError:
        raise UserError(f"the bfcl benchmark reads the bfcl-eval package: {INSTALL}") from None


def data_directory() -> Path:
    """Where the installed bfcl-eval keeps its data (found without importing the package,
    whose modules import every provider's SDK)."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise UserError(f"the bfcl benchmark reads the bfcl-eval package: {INSTALL}")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def read_questions(category: str) -> Iterator[Question]:
    """The questions of one category, each with its possible answer."""
    data = data_directory()
    answers = {
        row["id"]: row["ground_truth"]
        for row in _rows(data / "possible_answer" / f"BFCL_v4_{category}.json")
    }
    for row in _rows(data / f"BFCL_v4_{category}.json"):
        yield Question(
            category=category,
            id=row["id"],
            messages=row["question"][0],  # single-turn: one turn of messages
            functions=row["function"],
            ground_truth=answers[row["id"]],
        )


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    """Rows of one of BFCL's JSON-lines files."""
    if not path.is_file():
        raise UserError(f"{path}: missing from the installed bfcl-eval; reinstall it ({INSTALL})")
    with path.open("rb") as handle:
        for line in handle:
            if line.strip():
                yield orjson.loads(line)
