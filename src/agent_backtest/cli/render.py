"""Terminal tables shared by the reading commands."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from rich.console import Console

from agent_backtest.cli.terminal import escape

if TYPE_CHECKING:
    from agent_backtest.formats import InputSummary


def input_report(
    summary: InputSummary, units: Counter[str], unit_skips: Counter[str]
) -> dict[str, Any]:
    """What was read from one input, as plain data (the ``--json`` report and the table)."""
    return {
        "file": summary.file,
        "format": summary.format,
        "sessions": summary.sessions,
        "duplicate_sessions": summary.duplicate_sessions,
        "steps": dict(sorted(summary.steps.items())),
        "units": dict(sorted(units.items())),
        "skips": dict(sorted((summary.skips.counts + unit_skips).items())),
        "reconstructed": summary.llm_steps_reconstructed,
        "without_tool_definitions": summary.llm_steps_without_tools,
        "tools_supplied": summary.llm_steps_tools_supplied,
        "secret_fields_dropped": dict(sorted(summary.secret_fields_dropped.items())),
        "unsent_parts": summary.llm_steps_unsent_parts,
        "skip_examples": [
            {"reason": s.reason, "location": s.location, "detail": s.detail}
            for s in summary.skips.examples
        ],
    }


def print_input_table(console: Console, reports: list[dict[str, Any]]) -> None:
    """A block per input: format, sessions, steps and units by kind, skips by reason, flags."""
    for report in reports:
        console.print(f"[bold]{escape(report['file'])}[/bold]  ({report['format']})")
        rows = [
            ("sessions", _sessions(report)),
            ("steps", _counts(report["steps"]) or "none"),
            ("units", _counts(report["units"]) or "none"),
            ("skipped", _counts(report["skips"]) or "none"),
            *(("note", flag) for flag in _flags(report)),
        ]
        for label, value in rows:
            console.print(f"  {label:<9} {escape(value)}")
        for example in report["skip_examples"]:
            console.print(
                escape(
                    f"  skipped   {example['reason']} at {example['location']}: {example['detail']}"
                )
            )


def _sessions(report: dict[str, Any]) -> str:
    text = str(report["sessions"])
    if report["duplicate_sessions"]:
        text += f" (+{report['duplicate_sessions']} duplicates ignored)"
    return text


def _counts(counts: dict[str, int]) -> str:
    return " · ".join(f"{name} {count}" for name, count in counts.items())


# What an input's report notes, when its count is not 0: the count, then these words.
NOTES = (
    ("reconstructed", "LLM steps whose request was rebuilt, not recorded as sent"),
    (
        "without_tool_definitions",
        "LLM steps lack their tool definitions (the trace did not record them; --tools supplies "
        "them)",
    ),
    ("secret_fields_dropped", None),  # a count per field: written by _secret_fields
    ("tools_supplied", "LLM steps use tool definitions from --tools"),
    (
        "unsent_parts",
        "LLM steps hold reasoning or parts chat completions does not take (kept in the trace, "
        "left out of a replay and listed as adjustments)",
    ),
)


def _flags(report: dict[str, Any]) -> list[str]:
    return [
        f"{report[key]} {words}" if words else _secret_fields(report[key])
        for key, words in NOTES
        if report[key]
    ]


def _secret_fields(dropped: dict[str, int]) -> str:
    return (
        f"{sum(dropped.values())} recorded request fields left out as credentials or transport "
        f"options, never sent ({_counts(dropped)})"
    )
