"""``results.csv``: one row per unit and repeat, for spreadsheets and ad-hoc analysis."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agent_backtest.reporting.answers import arguments_json, tool_names
from agent_backtest.reporting.loading import Joined
from agent_backtest.runs import ResultRecord, ScoreRecord, private_atomic_writer
from agent_backtest.units import Unit

# Production's answer and the candidate's, side by side.
ANSWER_COLUMNS = (
    "golden_tool",
    "golden_args",
    "golden_text",
    "candidate_tool",
    "candidate_args",
    "candidate_text",
)
COLUMNS = (
    "unit_id",
    "repeat",
    "session",
    "turn",
    "node",
    "kind",
    "split",
    "agent_version",
    *ANSWER_COLUMNS,
    "status",
    "bucket",
    "strict",
    "score",
    "method",
    "judge_reason",
    "unscored_reason",
    "error_kind",
    "latency_ms",
    "input_tokens",
    "output_tokens",
)
LABEL_PREFIX = "label."
# Text from traces that a spreadsheet would run as a formula (CSV injection); such a cell gets a
# leading apostrophe, which spreadsheets hide and which keeps the text as text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
TRACE_COLUMNS = frozenset({"session", "node", *ANSWER_COLUMNS, "judge_reason"})


def write_results_csv(joined: Iterable[Joined], path: Path, labels: Mapping[str, str]) -> int:
    """Write the CSV of ``joined`` atomically (mode 0600: it holds user utterances).

    The run's labels come last, one ``label.KEY`` column each, the same on every row, so rows
    of several runs' files concatenated still say which run they came from. Returns the number
    of rows written.
    """
    label_cells = {f"{LABEL_PREFIX}{key}": value for key, value in sorted(labels.items())}
    count = 0
    with private_atomic_writer(path) as handle:
        text = io.TextIOWrapper(handle, encoding="utf-8", newline="")
        writer = csv.DictWriter(text, fieldnames=(*COLUMNS, *label_cells), lineterminator="\n")
        writer.writeheader()
        for unit, score, result in joined:
            writer.writerow(neutralise({**csv_row(unit, score, result), **label_cells}))
            count += 1
        text.flush()
        text.detach()  # the writer closes the file itself
    return count


def csv_row(unit: Unit | None, score: ScoreRecord, result: ResultRecord | None) -> dict[str, Any]:
    """The cells of one (unit, repeat)."""
    golden = unit.golden.message if unit else None
    candidate = result.response.message if result and result.response else None
    usage = result.response.usage if result and result.response else None
    return {
        "unit_id": score.unit_id,
        "repeat": score.repeat,
        "session": score.session_id,
        "turn": unit.turn_index if unit else "",
        "node": score.node or "",
        "kind": score.kind,
        "split": score.split or "",
        "agent_version": score.agent_version or "",
        "golden_tool": tool_names(golden),
        "golden_args": arguments_json(golden),
        "golden_text": golden.text() if golden else "",
        "candidate_tool": tool_names(candidate),
        "candidate_args": arguments_json(candidate),
        "candidate_text": candidate.text() if candidate else "",
        "status": score.status,
        "bucket": score.bucket or "",
        "strict": "" if score.strict is None else str(score.strict).lower(),
        "score": "" if score.score is None else score.score,
        "method": score.method or "",
        "judge_reason": judge_reason(score),
        "unscored_reason": score.unscored_reason or "",
        "error_kind": score.error_kind or "",
        "latency_ms": ""
        if not result or result.latency_ms is None
        else round(result.latency_ms, 3),
        "input_tokens": _tokens(usage.input_tokens if usage else None),
        "output_tokens": _tokens(usage.output_tokens if usage else None),
    }


def judge_reason(score: ScoreRecord) -> str:
    """The judge's reasons, one ``target: reason`` line per judged item."""
    return "\n".join(f"{item.target}: {reason}" for item in score.judged for reason in item.reasons)


def neutralise(row: dict[str, Any]) -> dict[str, Any]:
    """The row with trace text and labels that start like a formula kept as text."""
    return {
        name: f"'{value}"
        if (name in TRACE_COLUMNS or name.startswith(LABEL_PREFIX))
        and isinstance(value, str)
        and value.startswith(FORMULA_STARTS)
        else value
        for name, value in row.items()
    }


def _tokens(value: int | None) -> int | str:
    return "" if value is None else value
