"""The profile summarised as a few plain tables (title, headers, rows of text) and notes.

The terminal table and the Markdown report render these same tables, so they cannot disagree.
A figure that is not available is shown as ``n/a`` and its reason is listed in the notes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pydantic import BaseModel

from agent_backtest.api.profiles import (
    Availability,
    CostFigure,
    DistributionFigure,
    Profile,
    ProfileGroup,
    TallyFigure,
    Times,
)

NOT_AVAILABLE = "n/a"
SIDE_BY_SIDE = 4
PARTIAL = "*"
LEGEND = (
    "≥: at least this much (some values are missing); *: over the observed values only; "
    "n/a: not available (why: below)"
)
TIME_FIGURES: tuple[tuple[str, Callable[[Times], DistributionFigure]], ...] = (
    ("LLM service", lambda time: time.llm_service_ms.all),
    ("tool service", lambda time: time.tool_service_ms.all),
    ("gap within turns", lambda time: time.gap_ms.within_turns),
    ("gap between turns", lambda time: time.gap_ms.between_turns),
    ("session span", lambda time: time.session_span_ms),
)
# The columns of each table, in the order its rows give them.
CALLS_HEADERS = (
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
)
TOOLS_HEADERS = (
    "group",
    "tool",
    "calls",
    "success",
    "failed",
    "timeout/unknown",
    "retries",
    "p50 ms",
    "p95 ms",
)
TIME_HEADERS = ("group", "figure", "count", "total", "p50", "p95", "max")
TOKENS_HEADERS = ("group", "model", "LLM calls", "input", "output", "cost")
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


def number(value: float | int | None) -> str:
    """A figure as text: thousands separators, at most one decimal, n/a for None."""
    if value is None:
        return NOT_AVAILABLE
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.1f}"


def total(value: TallyFigure | CostFigure) -> str:
    """A total; over partly missing data at least the observed total (≥), with none n/a."""
    if value.available:
        return number(value.total)
    if not isinstance(value, TallyFigure) or not value.count:
        return NOT_AVAILABLE
    return "≥" + number(value.observed_total)


def observed(value: DistributionFigure, shown: float | int | None) -> str:
    """A percentile or maximum of ``value``; over partly missing data marked as over the
    observed values only (*), with none observed n/a."""
    if value.available:
        return number(shown)
    if not value.count:
        return NOT_AVAILABLE
    return number(shown) + PARTIAL


def calls_table(groups: dict[str, ProfileGroup]) -> Table:
    """Per group: sessions, turns, LLM and tool calls by status, retries, parallel calls."""
    rows = []
    for name, group in groups.items():
        tool = group.calls.tool
        rows.append(
            (
                name,
                number(group.sessions),
                number(group.turns),
                number(group.calls.llm.total),
                number(tool.total),
                number(tool.by_status.success),
                number(tool.by_status.failed),
                number(tool.by_status.timeout_or_unknown),
                total(tool.repeated.retries),
                total(tool.repeated.repeats),
                total(tool.parallel.overlapping_calls),
                number(tool.parallel.requested_together.calls),
            )
        )
    return Table("Calls", CALLS_HEADERS, rows)


def tools_table(groups: dict[str, ProfileGroup]) -> Table:
    """Per group and tool: calls by status, retries, service time p50 and p95."""
    rows = []
    for name, group in groups.items():
        tool = group.calls.tool
        times = group.time.tool_service_ms.by_tool
        for tool_name, count in tool.by_tool.items():
            status = tool.by_tool_status[tool_name]
            time = times[tool_name]
            rows.append(
                (
                    name,
                    tool_name,
                    number(count),
                    number(status.success),
                    number(status.failed),
                    number(status.timeout_or_unknown),
                    number(tool.repeated.retries_by_tool.get(tool_name, 0)),
                    observed(time, time.p50),
                    observed(time, time.p95),
                )
            )
    return Table("Calls by tool", TOOLS_HEADERS, rows)


def time_table(groups: dict[str, ProfileGroup]) -> Table:
    """Per group: count, total, p50, p95 and max of each time distribution (ms)."""
    rows = []
    for name, group in groups.items():
        for label, figure_of in TIME_FIGURES:
            value = figure_of(group.time)
            rows.append(
                (
                    name,
                    label,
                    number(value.count),
                    total(value),
                    observed(value, value.p50),
                    observed(value, value.p95),
                    observed(value, value.max),
                )
            )
    return Table("Time (ms)", TIME_HEADERS, rows)


def tokens_table(groups: dict[str, ProfileGroup]) -> Table:
    """Per group and model: LLM calls, input and output tokens, cost."""
    rows = []
    for name, group in groups.items():
        costs = group.tokens.cost.by_model
        for model, tokens in group.tokens.by_model.items():
            rows.append(
                (
                    name,
                    model,
                    number(group.calls.llm.by_model[model]),
                    total(tokens.input),
                    total(tokens.output),
                    total(costs[model]) if model in costs else NOT_AVAILABLE,
                )
            )
    return Table("Tokens", TOKENS_HEADERS, rows)


def differences_table(profile: Profile) -> Table | None:
    """Key figures of each variant against the baseline, when groups are compared."""
    compared = profile.comparison
    if compared is None or not compared.variants:
        return None
    baseline = compared.baseline or ""
    rows = [
        (name, key, number(entry.baseline), number(entry.value), number(entry.difference))
        for name, entries in compared.variants.items()
        for key in KEY_DIFFERENCES
        if (entry := entries.get(key)) is not None
    ]
    return Table(
        f"Differences against {baseline}",
        ("variant", "figure", baseline, "value", "difference"),
        rows,
    )


def tables(profile: Profile) -> list[Table]:
    """Every summary table of a profile, in reading order, laid out for reading.

    With one group the group column is left out (the title names the group); with a few groups
    the calls table has a column per group, so groups read side by side.
    """
    groups = profile.groups
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


def notes(profile: Profile) -> list[str]:
    """Why each unavailable figure is unavailable, once per group and reason (group named when
    there are several)."""
    found = []
    several = len(profile.groups) > 1
    for name, group in profile.groups.items():
        seen: set[str] = set()
        for path, reason in _reasons(group):
            if reason not in seen:
                seen.add(reason)
                found.append(f"{name}: {path}: {reason}" if several else f"{path}: {reason}")
    if profile.sessions_in_no_group:
        found.append(
            f"{profile.sessions_in_no_group} sessions are in no group "
            "(they match no --variant, or have no annotated variant)"
        )
    return found


def _reasons(
    figures: BaseModel | dict[str, BaseModel], path: str = ""
) -> Iterator[tuple[str, str]]:
    """(path, reason) of each unavailable figure, depth first, in the order of the JSON keys."""
    if isinstance(figures, Availability) and not figures.available and figures.reason:
        yield path.lstrip("."), figures.reason
        return
    parts = figures if isinstance(figures, dict) else dict(figures)
    for key in sorted(parts):
        value = parts[key]
        # Per-tool and per-model times repeat the reason of their total; tokens exist only by model.
        skip = key.startswith("by_") and not path.startswith(".tokens")
        if isinstance(value, BaseModel | dict) and not skip:
            yield from _reasons(value, f"{path}.{key}")
