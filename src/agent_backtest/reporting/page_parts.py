"""Pieces that every job's report page is built from: the facts list, headline cards, and the
header and count rows of its tables.

The pages of replay, simulate and bench look alike on purpose (one stylesheet, the same
classes), so a reader who knows one page finds their way on the others; these helpers keep that
markup in one place. Every text goes through :func:`~agent_backtest.reporting.markup.tag`,
which escapes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agent_backtest.reporting.charts import RateBar, rate_chart
from agent_backtest.reporting.figures import clustered_rate
from agent_backtest.reporting.markup import Markup, tag
from agent_backtest.runs.estimate import ClusteredMean


def facts_list(facts: Sequence[tuple[str, object]]) -> Markup:
    """A definition list of (name, value) pairs, in their order."""
    return tag("dl", [(tag("dt", k), tag("dd", v)) for k, v in facts], attrs={"class": "facts"})


def metric_card(key: str, name: str, mean: float | None, interval: str, *notes: str) -> Markup:
    """A headline card for a mean: its value to three places, its interval and notes under it;
    ``data-value`` holds the mean unrounded (empty when there is none)."""
    return tag(
        "div",
        tag("div", name, attrs={"class": "name"}),
        tag("div", "n/a" if mean is None else f"{mean:.3f}", attrs={"class": "mean"}),
        tag("div", interval, attrs={"class": "interval"}),
        [tag("div", note, attrs={"class": "note"}) for note in notes],
        attrs={"class": "metric", "data-metric": key, "data-value": "" if mean is None else mean},
    )


def count_card(key: str, name: str, count: int, note: str) -> Markup:
    """A headline card for a count of things that went wrong: marked bad unless it is 0."""
    return tag(
        "div",
        tag("div", name, attrs={"class": "name"}),
        tag("div", count, attrs={"class": "mean"}),
        tag("div", note, attrs={"class": "note"}),
        attrs={
            "class": f"metric{' bad' if count else ''}",
            "data-metric": key,
            "data-value": count,
        },
    )


def head_row(*columns: str, numeric: int = 0) -> Markup:
    """A table's header row; the last ``numeric`` columns hold numbers (aligned right)."""
    first_number = len(columns) - numeric
    return tag(
        "tr",
        [
            tag("th", column, attrs={"class": "num"} if i >= first_number else None)
            for i, column in enumerate(columns)
        ],
    )


def count_rows(counts: Mapping[str, int]) -> list[Markup] | Markup:
    """One row per (name, count), or a single "none 0" row when there are none."""
    rows = [
        tag("tr", tag("td", name), tag("td", n, attrs={"class": "num"}))
        for name, n in counts.items()
    ]
    return rows or tag("tr", tag("td", "none"), tag("td", 0, attrs={"class": "num"}))


def passk_table(
    pass_hat_k: Mapping[int, ClusteredMean], pass_at_k: Mapping[int, ClusteredMean], of: str
) -> Markup:
    """pass^k and pass@k for each k, with their intervals and how many ``of`` (cases, flows)
    each rests on."""
    rows = [
        tag(
            "tr",
            tag("td", k),
            tag("td", clustered_rate(hat), attrs={"class": "mono"}),
            tag("td", clustered_rate(pass_at_k[k]), attrs={"class": "mono"}),
            tag("td", hat.n, attrs={"class": "num"}),
            attrs={"data-k": k},
        )
        for k, hat in pass_hat_k.items()
    ]
    return tag(
        "table", head_row("k", "pass^k", "pass@k", of, numeric=1), rows, attrs={"id": "passk"}
    )


def passk_chart(pass_hat_k: Mapping[int, ClusteredMean]) -> Markup | str:
    """pass^k by k as bars with their intervals; nothing without a k."""
    bars = [
        RateBar(f"pass^{k}", e.mean, *(e.ci95 or (None, None)), e.n) for k, e in pass_hat_k.items()
    ]
    return rate_chart(bars, "pass^k by k") if bars else ""
