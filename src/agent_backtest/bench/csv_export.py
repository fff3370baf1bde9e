"""``results.csv`` of a bench run: one row per episode, for spreadsheets and ad-hoc analysis."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from agent_backtest.bench.models import EpisodeRecord, GradeRecord
from agent_backtest.bench.reading import BenchRun, error_kind, passed
from agent_backtest.reporting.csv_export import FORMULA_STARTS
from agent_backtest.runs import private_atomic_writer

COLUMNS = (
    "episode_id",
    "case_id",
    "rollout",
    "seed",
    "prompt_group",
    "ended_by",
    "error_kind",
    "error_detail",
    "reward",
    "passed",
    "reasons",
    "steps",
    "tool_calls",
    "model_calls",
    "input_tokens",
    "output_tokens",
    "seconds",
    "state_hash",
    "trace",
)
COMPONENT_PREFIX = "component."
# Cells whose text comes from the benchmark, the environment or the model.
TEXT_COLUMNS = frozenset(
    {"episode_id", "case_id", "prompt_group", "error_detail", "reasons", "trace"}
)


def write_episodes_csv(run: BenchRun, path: Path) -> int:
    """Write the CSV of ``run`` atomically (mode 0600); the number of rows written.

    Each reward component gets a ``component.NAME`` column, empty where its grader gave no
    value; a missing count or reward is an empty cell, never 0.
    """
    names = list(dict.fromkeys(name for grade in run.grades.values() for name in grade.components))
    columns = (*COLUMNS, *(COMPONENT_PREFIX + name for name in names))
    with private_atomic_writer(path) as handle:
        text = io.TextIOWrapper(handle, encoding="utf-8", newline="")
        writer = csv.DictWriter(text, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for episode in run.episodes:
            writer.writerow(_neutralise(episode_row(episode, run.grade(episode), names)))
        text.flush()
        text.detach()  # the writer closes the file itself
    return len(run.episodes)


def episode_row(
    episode: EpisodeRecord, grade: GradeRecord | None, components: list[str]
) -> dict[str, Any]:
    """The cells of one episode."""
    reward = grade.reward if grade else None
    verdict = passed(reward)
    row: dict[str, Any] = {
        "episode_id": episode.episode_id,
        "case_id": episode.case_id,
        "rollout": episode.rollout,
        "seed": episode.seed,
        "prompt_group": episode.prompt_group,
        "ended_by": episode.ended_by,
        "error_kind": error_kind(episode, grade) or "",
        "error_detail": episode.error.detail if episode.error else "",
        "reward": _cell(reward),
        "passed": "" if verdict is None else str(verdict).lower(),
        "reasons": "\n".join(f"{k}: {v}" for k, v in grade.reasons.items()) if grade else "",
        "steps": episode.steps,
        "tool_calls": episode.tool_calls,
        "model_calls": episode.model_calls,
        "input_tokens": _cell(episode.input_tokens),
        "output_tokens": _cell(episode.output_tokens),
        "seconds": round(episode.seconds, 3),
        "state_hash": episode.state_hash or "",
        "trace": episode.trace,
    }
    for name in components:
        row[COMPONENT_PREFIX + name] = _cell(grade.components.get(name) if grade else None)
    return row


def _cell(value: float | None) -> float | str:
    return "" if value is None else value


def _neutralise(row: dict[str, Any]) -> dict[str, Any]:
    """The row with text that starts like a spreadsheet formula kept as text."""
    return {
        name: f"'{value}"
        if name in TEXT_COLUMNS and isinstance(value, str) and value.startswith(FORMULA_STARTS)
        else value
        for name, value in row.items()
    }
