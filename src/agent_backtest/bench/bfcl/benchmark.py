"""A benchmark directory made from BFCL's single-turn categories."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from agent_backtest.bench.bfcl.data import Question, package_version, read_questions
from agent_backtest.bench.bfcl.keys import answer_keys
from agent_backtest.bench.bfcl.tools import tool_name
from agent_backtest.bench.models import (
    BenchmarkManifest,
    Case,
    EpisodeRules,
    Gold,
    GoldAction,
)
from agent_backtest.errors import UserError
from agent_backtest.providers.config import default_cache_dir
from agent_backtest.runs.files import private_atomic_writer, private_mkdir
from agent_backtest.trace import dump_record
from agent_backtest.units.answer_key import ArgumentKey, CallKey

__all__ = ["CATEGORIES", "cached_benchmark", "write_benchmark"]

# The single-turn Python categories graded by BFCL's AST checker.
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple")
# Categories whose calls BFCL grades in any order.
UNORDERED = {"parallel", "parallel_multiple"}


def write_benchmark(out: Path, categories: Sequence[str] = CATEGORIES) -> Path:
    """Write the benchmark directory of ``categories`` at ``out`` (which must not exist)."""
    unknown = [c for c in categories if c not in CATEGORIES]
    if unknown:
        raise UserError(
            f"unknown BFCL category {unknown[0]!r}: choose among {', '.join(CATEGORIES)}",
            "categories",
        )
    questions = [q for category in categories for q in read_questions(category)]
    manifest = BenchmarkManifest(
        name="bfcl",
        version=f"bfcl-eval {package_version()}: {', '.join(categories)}",
        release="test",
        training_prohibited=False,
        environment="bfcl",
        graders=["tool_calls"],
        rules=EpisodeRules(
            max_steps=1, first_tool_call_only=False, stop_marker=None, reward_requires_end=False
        ),
    )
    private_mkdir(out)
    with private_atomic_writer(out / "manifest.json") as handle:
        handle.write(manifest.model_dump_json(by_alias=True, indent=2).encode() + b"\n")
    _write_lines(out / "cases.jsonl", (_case(q) for q in questions))
    _write_lines(out / manifest.gold, (_gold(q) for q in questions))
    return out


def cached_benchmark() -> Path:
    """The four categories' benchmark in the user cache, written once per bfcl-eval version."""
    home = default_cache_dir() / "benchmarks" / f"bfcl-{package_version()}"
    if (home / "manifest.json").is_file():
        return home
    private_mkdir(home.parent)
    staging = Path(tempfile.mkdtemp(dir=home.parent, prefix=".bfcl-"))
    try:
        write_benchmark(staging / "benchmark")
        # written meanwhile by another process (the rename fails): theirs is the same
        with contextlib.suppress(OSError):
            os.replace(staging / "benchmark", home)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return home


def _case(question: Question) -> Case:
    """The public part of a question: its messages and functions."""
    return Case(
        id=question.id,
        messages=question.messages,
        environment="bfcl",
        metadata={"category": question.category, "functions": question.functions},
    )


def _gold(question: Question) -> Gold:
    """The acceptable calls of a question, as answer keys under the names the APIs take."""
    actions = [
        GoldAction(name=tool_name(key.name), arguments=_first_values(key), key=_renamed(key))
        for key in answer_keys(question.functions, question.ground_truth)
    ]
    return Gold(
        case_id=question.id,
        actions=actions,
        actions_in_order=question.category not in UNORDERED,
        only_these_calls=True,
    )


def _renamed(key: CallKey) -> CallKey:
    """The key under the tool's name as offered."""
    return key.model_copy(update={"name": tool_name(key.name)})


def _first_values(key: CallKey) -> dict[str, object]:
    """One acceptable call: the first value of every argument that is not optional-only."""
    return {
        name: value
        for name, argument in key.arguments.items()
        if (value := _first(argument)) is not _LEFT_OUT
    }


_LEFT_OUT = object()


def _first(argument: ArgumentKey) -> object:
    """The first acceptable value of an argument, or _LEFT_OUT when leaving it out is."""
    if argument.fields is not None:
        return {
            name: value
            for name, sub in argument.fields.items()
            if (value := _first(sub)) is not _LEFT_OUT
        }
    if argument.items is not None:
        return [_first(item) for item in argument.items]
    return argument.values[0] if argument.values else _LEFT_OUT


def _write_lines(path: Path, records: Iterable[Case | Gold]) -> None:
    """One record a line, atomically."""
    with private_atomic_writer(path) as handle:
        for record in records:
            handle.write(dump_record(record) + b"\n")
