"""The profile summarised as a few plain tables (title, headers, rows of text) and notes.

The terminal table and the Markdown report render these same tables, so they cannot disagree.
A figure that is not available is shown as ``n/a`` and its reason is listed in the notes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

NOT_AVAILABLE = "n/a"
SIDE_BY_SIDE = 4
PARTIAL = "*"
LEGEND = (
    "≥: at least this much (some values are missing); *: over the observed values only; "
    "n/a: not available (why: below)"
)
TIME_FIGURES = (
    ("LLM service", ("llm_service_ms", "all")),
    ("tool service", ("tool_service_ms", "all")),
    ("gap within turns", ("gap_ms", "within_turns")),
    ("gap between turns", ("gap_ms", "between_turns")),
    ("session span", ("session_span_ms",)),
)
# Differences shown in the summary; the profile JSON holds every figure's difference.
KEY_DIFFERENCES = (
    "/sessions",
    "/calls/llm/total",
    "/calls/tool/total",
    "/calls/tool/by_status/failed",
    "/calls/tool/repeated/retries/observed_total",
    "/calls/tool/parallel/overlapping_calls/observed_total",
    "/time/llm_service_ms/all/p50",
    "/time/llm_service_ms/all/p95",
    "/time/tool_service_ms/all/p50",
    "/time/tool_service_ms/all/p95",
    "/time/gap_ms/within_turns/p50",
    "/time/session_span_ms/p50",
    "/tokens/cost/total",
)


@dataclass(frozen=True)
class Table:
    """One summary table."""

    title: str
    headers: tuple[str, ...]
    rows: list[tuple[str, ...]]


def number(value: Any) -> str:
    """A figure as text: thousands separators, at most one decimal, n/a for None."""
    if value is None:
        return NOT_AVAILABLE
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.1f}"


def figure(value: dict[str, Any], key: str = "total") -> str:
    """A figure's value; over partly missing data a lower bound (≥) or an observed value (*).

    A total over partly missing values is at least the observed total; a percentile is marked
    as computed over the observed values only. With nothing observed it is n/a.
    """
    if value.get("available"):
        return number(value.get(key))
    if not value.get("count"):
        return NOT_AVAILABLE
    if key == "total":
        return "≥" + number(value["observed_total"])
    return number(value.get(key)) + PARTIAL


def calls_table(groups: dict[str, Any]) -> Table:
    """Per group: sessions, turns, LLM and tool calls by status, retries, parallel calls."""
    rows = []
    for name, group in groups.items():
        tool = group["calls"]["tool"]
        rows.append(
            (
                name,
                number(group["sessions"]),
                number(group["turns"]),
                number(group["calls"]["llm"]["total"]),
                number(tool["total"]),
                number(tool["by_status"]["success"]),
                number(tool["by_status"]["failed"]),
                number(tool["by_status"]["timeout_or_unknown"]),
                figure(tool["repeated"]["retries"]),
                figure(tool["repeated"]["repeats"]),
                figure(tool["parallel"]["overlapping_calls"]),
                number(tool["parallel"]["requested_together"]["calls"]),
            )
        )
    return Table(
        "Calls",
        (
            "group",
            "sessions",
            "turns",
            "LLM calls",
            "tool calls",
            "success",
            "failed",
            "timeout/unknown",
            "retries",
            "repeats",
            "overlapping",
            "asked together",
        ),
        rows,
    )


def tools_table(groups: dict[str, Any]) -> Table:
    """Per group and tool: calls by status, retries, service time p50 and p95."""
    rows = []
    for name, group in groups.items():
        tool = group["calls"]["tool"]
        times = group["time"]["tool_service_ms"]["by_tool"]
        for tool_name, count in tool["by_tool"].items():
            status = tool["by_tool_status"][tool_name]
            retries = tool["repeated"]["retries_by_tool"].get(tool_name, 0)
            rows.append(
                (
                    name,
                    tool_name,
                    number(count),
                    number(status["success"]),
                    number(status["failed"]),
                    number(status["timeout_or_unknown"]),
                    number(retries),
                    figure(times[tool_name], "p50"),
                    figure(times[tool_name], "p95"),
                )
            )
    return Table(
        "Calls by tool",
        (
            "group",
            "tool",
            "calls",
            "success",
            "failed",
            "timeout/unknown",
            "retries",
            "p50 ms",
            "p95 ms",
        ),
        rows,
    )


def time_table(groups: dict[str, Any]) -> Table:
    """Per group: count, total, p50, p95 and max of each time distribution (ms)."""
    rows = []
    for name, group in groups.items():
        for label, path in TIME_FIGURES:
            value = _at(group["time"], path)
            rows.append(
                (
                    name,
                    label,
                    number(value["count"]),
                    figure(value),
                    figure(value, "p50"),
                    figure(value, "p95"),
                    figure(value, "max"),
                )
            )
    return Table("Time (ms)", ("group", "figure", "count", "total", "p50", "p95", "max"), rows)


def tokens_table(groups: dict[str, Any]) -> Table:
    """Per group and model: LLM calls, input and output tokens, cost."""
    rows = []
    for name, group in groups.items():
        costs = group["tokens"]["cost"].get("by_model", {})
        for model, tokens in group["tokens"]["by_model"].items():
            cost = figure(costs[model]) if model in costs else NOT_AVAILABLE
            rows.append(
                (
                    name,
                    model,
                    number(group["calls"]["llm"]["by_model"][model]),
                    figure(tokens["input"]),
                    figure(tokens["output"]),
                    cost,
                )
            )
    return Table("Tokens", ("group", "model", "LLM calls", "input", "output", "cost"), rows)


def differences_table(profile: dict[str, Any]) -> Table | None:
    """Key figures of each variant against the baseline, when groups are compared."""
    compared = profile.get("comparison", {}).get("variants")
    if not compared:
        return None
    baseline = profile["comparison"]["baseline"]
    rows = [
        (name, key, number(entry["baseline"]), number(entry["value"]), number(entry["difference"]))
        for name, entries in compared.items()
        for key in KEY_DIFFERENCES
        if (entry := entries.get(key)) is not None
    ]
    return Table(
        f"Differences against {baseline}",
        ("variant", "figure", baseline, "value", "difference"),
        rows,
    )


def tables(profile: dict[str, Any]) -> list[Table]:
    """Every summary table of a profile, in reading order, laid out for reading.

    With one group the group column is left out (the title names the group); with a few groups
    the calls table has a column per group, so groups read side by side.
    """
    groups = profile["groups"]
    calls = calls_table(groups)
    found = [tools_table(groups), time_table(groups), tokens_table(groups)]
    if len(groups) == 1:
        found = [without_group(table, next(iter(groups))) for table in found]
    found.insert(0, transpose(calls) if len(groups) <= SIDE_BY_SIDE else calls)
    differences = differences_table(profile)
    return [*found, differences] if differences else found


def transpose(table: Table) -> Table:
    """Rows become columns: a column per group, a row per figure."""
    columns = list(zip(table.headers, *table.rows, strict=True))
    return Table(
        table.title, ("figure", *columns[0][1:]), [tuple(column) for column in columns[1:]]
    )


def without_group(table: Table, name: str) -> Table:
    """The table without its group column, titled with the group's name."""
    return Table(f"{table.title}: {name}", table.headers[1:], [row[1:] for row in table.rows])


def notes(profile: dict[str, Any]) -> list[str]:
    """Why each unavailable figure is unavailable, once per group and reason (group named when
    there are several)."""
    found = []
    several = len(profile["groups"]) > 1
    for name, group in profile["groups"].items():
        seen: set[str] = set()
        for path, reason in _reasons(group):
            if reason not in seen:
                seen.add(reason)
                found.append(f"{name}: {path}: {reason}" if several else f"{path}: {reason}")
    if profile.get("sessions_in_no_group"):
        found.append(
            f"{profile['sessions_in_no_group']} sessions are in no group "
            "(they match no --variant, or have no annotated variant)"
        )
    return found


def _reasons(figures: dict[str, Any], path: str = "") -> Iterator[tuple[str, str]]:
    """(path, reason) of each unavailable figure, depth first."""
    if figures.get("available") is False and figures.get("reason"):
        yield path.lstrip("."), figures["reason"]
        return
    for key in sorted(figures):
        # Per-tool and per-model times repeat the reason of their total; tokens exist only by model.
        skip = key.startswith("by_") and not path.startswith(".tokens")
        if isinstance(figures[key], dict) and not skip:
            yield from _reasons(figures[key], f"{path}.{key}")


def _at(figures: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """The figure at a path of keys."""
    for key in path:
        figures = figures[key]
    return figures
