"""``compare.html``: two runs side by side, as one static, self-contained page (no script).

Flipped answers link to the unit's drill-down in each run's own ``report.html``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from agent_backtest.report.assets import page
from agent_backtest.report.charts import RateBar, delta_chart
from agent_backtest.report.figures import rate, signed
from agent_backtest.report.markup import Markup, escape, join, tag


def render_compare(compare: dict[str, Any], out_dir: Path) -> str:
    """The comparison page, with links relative to ``out_dir`` (where it is written)."""
    a, b = compare["a"], compare["b"]
    links = {side: _report_href(Path(compare[side]["run"]), out_dir) for side in ("a", "b")}
    body = join(
        [
            tag("h1", f"abt compare: {a['name']} → {b['name']}"),
            _sides(a, b, links),
            _headline(compare),
            _warnings(compare["warnings"]),
            _mcnemar(compare["mcnemar"]),
            _groups(compare, "node", "Agreement change by node"),
            _groups(compare, "tool", "Agreement change by production's tool"),
            _flips(compare["flips"], links),
            _missing(compare),
        ]
    )
    return page(f"abt compare: {escape(a['name'])} → {escape(b['name'])}", body)


def _report_href(run: Path, out_dir: Path) -> str | None:
    """The relative address of a run's report.html, or None when it was not written."""
    report = run / "report.html"
    if not report.exists():
        return None
    return quote(Path(os.path.relpath(report.resolve(), out_dir.resolve())).as_posix())


def _sides(a: dict[str, Any], b: dict[str, Any], links: dict[str, str | None]) -> Markup:
    rows = [tag("tr", tag("th", ""), tag("th", "A (baseline)"), tag("th", "B"))]
    for key, label in (
        ("run", "run"),
        ("model", "candidate"),
        ("patch", "patch"),
        ("k", "repeats (k)"),
        ("judge", "judge"),
        ("scoring_id", "scoring id"),
        ("records", "answers"),
    ):
        rows.append(
            tag("tr", tag("th", label), tag("td", _text(a.get(key))), tag("td", _text(b.get(key))))
        )
    rows.append(
        tag(
            "tr",
            tag("th", "report"),
            *(
                tag(
                    "td",
                    tag("a", "report.html", attrs={"href": links[s]})
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


def _headline(compare: dict[str, Any]) -> Markup:
    counts = compare["counts"]
    rows = [tag("tr", tag("th", ""), tag("th", "A"), tag("th", "B"), tag("th", "B − A"))]
    for key, label in (("agreement", "agreement"), ("strict", "strict agreement")):
        figures = compare[key]
        difference = figures["difference"]
        rows.append(
            tag(
                "tr",
                tag("th", label),
                tag("td", rate(figures["a"]), attrs={"class": "mono"}),
                tag("td", rate(figures["b"]), attrs={"class": "mono"}),
                tag(
                    "td",
                    signed(difference),
                    attrs={
                        "class": "mono",
                        "data-metric": f"{key}-difference",
                        "data-value": ""
                        if difference["mean"] is None
                        else repr(difference["mean"]),
                    },
                ),
            )
        )
    note = (
        f"Over the {counts['paired']} answers scored in both runs "
        f"({counts['sessions']} sessions); the interval of B − A is clustered by session."
    )
    return tag(
        "section",
        tag("h2", "Agreement"),
        tag("table", rows, attrs={"id": "headline"}),
        tag("p", note, attrs={"class": "muted"}),
    )


def _mcnemar(test: dict[str, Any]) -> Markup:
    rows = [
        tag("tr", tag("th", ""), tag("th", "B strict right"), tag("th", "B strict wrong")),
        tag(
            "tr",
            tag("th", "A strict right"),
            tag("td", test["both_right"]),
            tag("td", test["a_right_b_wrong"], attrs={"data-metric": "a_right_b_wrong"}),
        ),
        tag(
            "tr",
            tag("th", "A strict wrong"),
            tag("td", test["a_wrong_b_right"], attrs={"data-metric": "a_wrong_b_right"}),
            tag("td", test["both_wrong"]),
        ),
    ]
    return tag(
        "section",
        tag("h2", "Strict agreement flips"),
        tag("table", rows, attrs={"id": "mcnemar"}),
        tag(
            "p",
            f"McNemar exact test (two-sided binomial on the discordant pairs): "
            f"p = {test['p_value']:.4g}",
            attrs={"data-metric": "p_value", "data-value": repr(test["p_value"])},
        ),
    )


def _groups(compare: dict[str, Any], grouping: str, title: str) -> Markup:
    rows = compare[f"by_{grouping}"]
    if not rows:
        return Markup("")
    head = tag("tr", *(tag("th", h) for h in (grouping, "n", "A", "B", "B − A")))
    body = [
        tag(
            "tr",
            tag("td", r["label"]),
            tag("td", r["n"], attrs={"class": "num"}),
            tag("td", rate(r["a"]), attrs={"class": "mono"}),
            tag("td", rate(r["b"]), attrs={"class": "mono"}),
            tag("td", signed(r["difference"]), attrs={"class": "mono"}),
        )
        for r in rows
    ]
    bars = [
        RateBar(
            r["label"], r["difference"]["mean"], *(r["difference"]["ci95"] or (None, None)), r["n"]
        )
        for r in rows
    ]
    return tag(
        "section",
        tag("h2", title),
        tag("table", head, body, attrs={"id": f"by-{grouping}"}),
        delta_chart(bars, title),
    )


def _flips(flips: dict[str, Any], links: dict[str, str | None]) -> Markup:
    parts = []
    for key, title in (
        ("a_right_b_wrong", "A right → B wrong"),
        ("a_wrong_b_right", "A wrong → B right"),
    ):
        items = flips[key]
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
                tag("td", f["unit_id"], attrs={"class": "mono"}),
                tag("td", f["repeat"]),
                tag("td", f["session_id"], attrs={"class": "mono"}),
                tag("td", f["node"] or ""),
                tag("td", f["golden_tool"] or "(text answer)"),
                tag("td", f"{f['bucket_a']}"),
                tag("td", f"{f['bucket_b']}"),
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


def _unit_links(item: dict[str, Any], links: dict[str, str | None]) -> list[Markup]:
    """Links to the unit's drill-down in each run's report."""
    anchor = f"#unit={quote(item['unit_id'])}&repeat={item['repeat']}"
    return [
        Markup(
            " ".join(
                tag(
                    "a",
                    f"in {side.upper()}",
                    attrs={"href": links[side] + anchor, "class": f"open-{side}"},
                )
                for side in ("a", "b")
                if links[side]
            )
        )
    ]


def _missing(compare: dict[str, Any]) -> Markup:
    missing = compare["missing"]
    parts = [tag("h2", "Not compared")]
    for key, title in (("only_in_a", "Only in A"), ("only_in_b", "Only in B")):
        items = missing[key]
        parts.append(
            tag(
                "details",
                tag("summary", f"{title}: {len(items)}"),
                tag(
                    "table",
                    tag("tr", tag("th", "unit"), tag("th", "repeat"), tag("th", "session")),
                    [
                        tag(
                            "tr",
                            tag("td", i["unit_id"], attrs={"class": "mono"}),
                            tag("td", i["repeat"]),
                            tag("td", i["session_id"], attrs={"class": "mono"}),
                        )
                        for i in items
                    ],
                    attrs={"id": key},
                ),
            )
        )
    items = missing["not_comparable"]
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
                        tag("td", i["unit_id"], attrs={"class": "mono"}),
                        tag("td", i["repeat"]),
                        tag("td", _status(i["status_a"], i["error_a"])),
                        tag("td", _status(i["status_b"], i["error_b"])),
                    )
                    for i in items
                ],
                attrs={"id": "not_comparable"},
            ),
        )
    )
    return tag("section", parts, attrs={"id": "missing"})


def _status(status: str, error: str | None) -> str:
    return f"{status} ({error})" if error else status


def _warnings(warnings: list[str]) -> Markup:
    if not warnings:
        return Markup("")
    return tag(
        "ul", [tag("li", w) for w in warnings], attrs={"class": "warnings", "id": "warnings"}
    )
