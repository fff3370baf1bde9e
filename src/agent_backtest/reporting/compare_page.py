"""``compare.html``: two runs side by side, as one static, self-contained page (no script).

Flipped answers link to the unit's drill-down in each run's own ``report.html``.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from agent_backtest.reporting.assets import page
from agent_backtest.reporting.charts import RateBar, delta_chart
from agent_backtest.reporting.figures import labels_text, p_text, rate, signed
from agent_backtest.reporting.markup import Markup, escape, join, tag
from agent_backtest.runs import Comparison, RunDirectory
from agent_backtest.runs.comparison import (
    AnswerKey,
    ComparedRun,
    Flip,
    GroupChange,
    McNemar,
    PairedRates,
)

Links = dict[str, str | None]


def render_compare(compare: Comparison, out_dir: Path) -> str:
    """The comparison page, with links relative to ``out_dir`` (where it is written)."""
    a, b = compare.a, compare.b
    links = {"a": _report_href(Path(a.run), out_dir), "b": _report_href(Path(b.run), out_dir)}
    body = join(
        [
            tag("h1", f"abt compare: {a.name} → {b.name}"),
            _sides(a, b, links),
            _headline(compare),
            _warnings(compare.warnings),
            _mcnemar(compare.mcnemar),
            _groups(compare.by_node, "node", "Agreement change by node"),
            _groups(compare.by_tool, "tool", "Agreement change by production's tool"),
            _flips(compare, links),
            _missing(compare),
        ]
    )
    return page(f"abt compare: {escape(a.name)} → {escape(b.name)}", body)


def _report_href(run: Path, out_dir: Path) -> str | None:
    """The relative address of a run's report.html, or None when it was not written."""
    report = RunDirectory(run).report_path
    if not report.exists():
        return None
    return quote(Path(os.path.relpath(report.resolve(), out_dir.resolve())).as_posix())


def _sides(a: ComparedRun, b: ComparedRun, links: Links) -> Markup:
    rows = [tag("tr", tag("th", ""), tag("th", "A (baseline)"), tag("th", "B"))]
    for label, value_a, value_b in (
        ("run", a.run, b.run),
        ("labels", labels_text(a.labels), labels_text(b.labels)),
        ("candidate", a.model, b.model),
        ("patch", a.patch, b.patch),
        ("repeats (k)", a.k, b.k),
        ("judge", a.judge, b.judge),
        ("scoring id", a.scoring_id, b.scoring_id),
        ("answers", a.records, b.records),
    ):
        rows.append(
            tag(
                "tr",
                tag("th", label),
                tag("td", _text(value_a), attrs={"data-side": "a"}),
                tag("td", _text(value_b), attrs={"data-side": "b"}),
                attrs={"data-fact": label},
            )
        )
    report_name = RunDirectory(Path(a.run)).report_path.name
    rows.append(
        tag(
            "tr",
            tag("th", "report"),
            *(
                tag(
                    "td",
                    tag("a", report_name, attrs={"href": links[s]})
                    if links[s]
                    else tag(
                        "span",
                        "not written: run abt report on it for drill-downs",
                        attrs={"class": "muted"},
                    ),
                )
                for s in ("a", "b")
            ),
        )
    )
    return tag("table", rows, attrs={"id": "sides"})


def _text(value: object) -> str:
    return "—" if value is None else str(value)


def _headline(compare: Comparison) -> Markup:
    counts = compare.counts
    heads = ("", "A", "B", "B − A", "p")
    rows = [tag("tr", *(tag("th", head) for head in heads))]
    figures: list[tuple[str, str, PairedRates]] = [
        ("strict", "exact", compare.strict),
        ("agreement", "agreement", compare.agreement),
    ]
    topic = compare.topic_agreement
    if topic.a.n:
        figures.append(
            (
                "topic_agreement",
                f"router agreement (n {topic.a.n}, {topic.a.sessions} sessions)",
                topic,
            )
        )
    for key, label, rates in figures:
        difference = rates.difference
        rows.append(
            tag(
                "tr",
                tag("th", label),
                tag("td", rate(rates.a), attrs={"class": "mono"}),
                tag("td", rate(rates.b), attrs={"class": "mono"}),
                tag(
                    "td",
                    signed(difference),
                    attrs={
                        "class": "mono",
                        "data-metric": f"{key}-difference",
                        "data-value": "" if difference.mean is None else repr(difference.mean),
                    },
                ),
                tag("td", p_text(rates.p_value), attrs={"class": "mono"}),
                attrs={"data-row": key},
            )
        )
    note = (
        f"Over the {counts.paired} answers scored in both runs "
        f"({counts.sessions} sessions). The interval of B − A and its p-value account for "
        "sessions (steps of one session are not independent draws); they agree: p < 0.05 "
        "exactly when the interval excludes 0."
    )
    return tag(
        "section",
        tag("h2", "Agreement"),
        tag("table", rows, attrs={"id": "headline"}),
        tag("p", note, attrs={"class": "muted"}),
    )


def _mcnemar(test: McNemar) -> Markup:
    rows = [
        tag("tr", tag("th", ""), tag("th", "B strict right"), tag("th", "B strict wrong")),
        tag(
            "tr",
            tag("th", "A strict right"),
            tag("td", test.both_right),
            tag("td", test.a_right_b_wrong, attrs={"data-metric": "a_right_b_wrong"}),
        ),
        tag(
            "tr",
            tag("th", "A strict wrong"),
            tag("td", test.a_wrong_b_right, attrs={"data-metric": "a_wrong_b_right"}),
            tag("td", test.both_wrong),
        ),
    ]
    return tag(
        "section",
        tag("h2", "Strict agreement flips"),
        tag("table", rows, attrs={"id": "mcnemar"}),
        tag(
            "p",
            f"McNemar exact test (two-sided binomial on the discordant pairs, unclustered: "
            f"every pair taken as independent): p = {test.p_value:.4g}",
            attrs={"data-metric": "p_value", "data-value": repr(test.p_value)},
        ),
    )


def _groups(rows: list[GroupChange], grouping: str, title: str) -> Markup:
    if not rows:
        return Markup("")
    head = tag("tr", *(tag("th", h) for h in (grouping, "n", "A", "B", "B − A")))
    body = [
        tag(
            "tr",
            tag("td", r.label),
            tag("td", r.n, attrs={"class": "num"}),
            tag("td", rate(r.a), attrs={"class": "mono"}),
            tag("td", rate(r.b), attrs={"class": "mono"}),
            tag("td", signed(r.difference), attrs={"class": "mono"}),
        )
        for r in rows
    ]
    bars = [
        RateBar(r.label, r.difference.mean, r.difference.low, r.difference.high, r.n) for r in rows
    ]
    return tag(
        "section",
        tag("h2", title),
        tag("table", head, body, attrs={"id": f"by-{grouping}"}),
        delta_chart(bars, title),
    )


def _flips(compare: Comparison, links: Links) -> Markup:
    parts = []
    for key, title, items in (
        ("a_right_b_wrong", "A right → B wrong", compare.flips.a_right_b_wrong),
        ("a_wrong_b_right", "A wrong → B right", compare.flips.a_wrong_b_right),
    ):
        head = tag(
            "tr",
            *(
                tag("th", h)
                for h in (
                    "unit",
                    "repeat",
                    "session",
                    "node",
                    "production's tool",
                    "A",
                    "B",
                    "open",
                )
            ),
        )
        rows = [
            tag(
                "tr",
                tag("td", f.unit_id, attrs={"class": "mono"}),
                tag("td", f.repeat),
                tag("td", f.session_id, attrs={"class": "mono"}),
                tag("td", f.node or ""),
                tag("td", f.golden_tool or "(text answer)"),
                tag("td", f"{f.bucket_a}"),
                tag("td", f"{f.bucket_b}"),
                tag("td", _unit_links(f, links)),
                attrs={"data-flip": key},
            )
            for f in items
        ]
        parts.append(
            tag(
                "details",
                tag("summary", f"{title}: {len(items)}"),
                tag("table", head, rows, attrs={"id": f"flips-{key}"}),
                attrs={"open": "open" if len(items) <= 200 else None},
            )
        )
    return tag("section", tag("h2", "Flipped answers"), parts)


def _unit_links(item: Flip, links: Links) -> list[Markup]:
    """Links to the unit's drill-down in each run's report."""
    anchor = f"#unit={quote(item.unit_id)}&repeat={item.repeat}"
    return [
        Markup(
            " ".join(
                tag(
                    "a",
                    f"in {side.upper()}",
                    attrs={"href": f"{href}{anchor}", "class": f"open-{side}"},
                )
                for side, href in links.items()
                if href
            )
        )
    ]


def _missing(compare: Comparison) -> Markup:
    missing = compare.missing
    parts = [tag("h2", "Not compared")]
    for key, title, items in (
        ("only_in_a", "Only in A", missing.only_in_a),
        ("only_in_b", "Only in B", missing.only_in_b),
    ):
        parts.append(
            tag(
                "details",
                tag("summary", f"{title}: {len(items)}"),
                tag(
                    "table",
                    tag("tr", tag("th", "unit"), tag("th", "repeat"), tag("th", "session")),
                    [_answer_row(i) for i in items],
                    attrs={"id": key},
                ),
            )
        )
    items = missing.not_comparable
    parts.append(
        tag(
            "details",
            tag("summary", f"Not scored on both sides: {len(items)}"),
            tag(
                "table",
                tag("tr", *(tag("th", h) for h in ("unit", "repeat", "A", "B"))),
                [
                    tag(
                        "tr",
                        tag("td", i.unit_id, attrs={"class": "mono"}),
                        tag("td", i.repeat),
                        tag("td", _status(i.status_a, i.error_a)),
                        tag("td", _status(i.status_b, i.error_b)),
                    )
                    for i in items
                ],
                attrs={"id": "not_comparable"},
            ),
        )
    )
    return tag("section", parts, attrs={"id": "missing"})


def _answer_row(item: AnswerKey) -> Markup:
    return tag(
        "tr",
        tag("td", item.unit_id, attrs={"class": "mono"}),
        tag("td", item.repeat),
        tag("td", item.session_id, attrs={"class": "mono"}),
    )


def _status(status: str, error: str | None) -> str:
    return f"{status} ({error})" if error else status


def _warnings(warnings: list[str]) -> Markup:
    if not warnings:
        return Markup("")
    return tag(
        "ul", [tag("li", w) for w in warnings], attrs={"class": "warnings", "id": "warnings"}
    )
