"""Short Markdown summaries of a report, a comparison and a gate, for pull-request comments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_backtest.report.figures import rate, signed
from agent_backtest.report.gate import Check

TOP_GROUPS = 5


def cell(text: object) -> str:
    """Text safe inside a Markdown table cell: no pipes, no line breaks, no raw HTML."""
    return (
        str(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("|", "\\|")
        .replace("\r", " ")
        .replace("\n", " ")
    )


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A pipe table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def report_markdown(name: str, summary: dict[str, Any], warnings: Sequence[str]) -> str:
    """A run's headline, its weakest tools and nodes, and its warnings."""
    counts, overall = summary["counts"], summary["overall"]
    parts = [
        f"### abt report: {cell(name)}\n",
        table(
            ("measure", "value"),
            [
                ("candidate", summary.get("run", {}).get("model") or "?"),
                ("agreement", rate(overall["agreement"])),
                ("strict agreement", rate(overall["strict"])),
                (
                    "scored",
                    f"{counts['scored']} of {counts['records']} answers, "
                    f"{counts['sessions']} sessions",
                ),
                ("infrastructure errors", counts["infra_errors"]),
                ("unscored", counts["unscored"]),
            ],
        ),
        "Buckets: "
        + (" · ".join(f"{cell(k)} {v}" for k, v in summary["buckets"].items()) or "none")
        + "\n",
    ]
    for grouping in ("tool", "node"):
        groups = sorted(
            summary.get(f"by_{grouping}", {}).items(),
            key=lambda item: (item[1]["agreement"]["mean"], item[0]),
        )
        if len(groups) > 1:
            parts.append(
                f"Lowest agreement by {grouping}:\n\n"
                + table(
                    (grouping, "n", "agreement"),
                    [
                        (label, g["agreement"]["n"], rate(g["agreement"]))
                        for label, g in groups[:TOP_GROUPS]
                    ],
                )
            )
    parts += _warnings(warnings)
    return "\n".join(parts)


def compare_markdown(compare: dict[str, Any], checks: Sequence[Check] = ()) -> str:
    """A comparison's headline, its McNemar test, its largest per-group changes."""
    a, b, counts, test = compare["a"], compare["b"], compare["counts"], compare["mcnemar"]
    parts = [
        f"### abt compare: {cell(a['name'])} → {cell(b['name'])}\n",
        table(
            ("", f"A ({a['model']})", f"B ({b['model']})", "B − A"),
            [
                (
                    name,
                    rate(compare[key]["a"]),
                    rate(compare[key]["b"]),
                    signed(compare[key]["difference"]),
                )
                for key, name in (("agreement", "agreement"), ("strict", "strict agreement"))
            ],
        ),
        f"{counts['paired']} paired answers in {counts['sessions']} sessions. Strict flips: "
        f"{test['a_right_b_wrong']} right → wrong, {test['a_wrong_b_right']} wrong → right "
        f"(McNemar exact p = {test['p_value']:.4g}).\n",
    ]
    for grouping in ("tool", "node"):
        rows = compare[f"by_{grouping}"]
        if len(rows) > 1:
            parts.append(
                f"Largest changes by {grouping}:\n\n"
                + table(
                    (grouping, "n", "A", "B", "B − A"),
                    [
                        (r["label"], r["n"], _mean(r["a"]), _mean(r["b"]), signed(r["difference"]))
                        for r in rows[:TOP_GROUPS]
                    ],
                )
            )
    missing = compare["counts"]
    if missing["only_in_a"] or missing["only_in_b"] or missing["not_comparable"]:
        parts.append(
            f"Not compared: {missing['only_in_a']} only in A, {missing['only_in_b']} "
            f"only in B, {missing['not_comparable']} not scored on both sides.\n"
        )
    if checks:
        parts.append(gate_markdown(checks, heading=False))
    parts += _warnings(compare["warnings"])
    return "\n".join(parts)


def gate_markdown(checks: Sequence[Check], heading: bool = True, name: str = "") -> str:
    """Passed or failed, and each bar with the value it was checked against."""
    passed = all(check.met for check in checks)
    title = f"**gate {'passed' if passed else 'failed'}**" + (f": {cell(name)}" if name else "")
    rows = [
        (
            check.name,
            check.requirement,
            "n/a" if check.value is None else f"{check.value:.4f}",
            "yes" if check.met else "**no**",
        )
        for check in checks
    ]
    text = table(("bar", "required", "value", "met"), rows)
    return (f"### abt gate\n\n{title}\n\n" if heading else f"{title}\n\n") + text


def _mean(estimate: dict[str, Any]) -> str:
    return "n/a" if estimate["mean"] is None else f"{estimate['mean']:.3f}"


def _warnings(warnings: Sequence[str]) -> list[str]:
    if not warnings:
        return []
    return ["Warnings:\n\n" + "".join(f"- {cell(w)}\n" for w in warnings)]
