"""Short Markdown summaries of a report, a comparison and a gate, for pull-request comments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agent_backtest.reporting.figures import (
    interval_label,
    labels_text,
    p_text,
    rate,
    rate_with_count,
    signed,
)

if TYPE_CHECKING:
    from agent_backtest.reporting.gate import Check
    from agent_backtest.runs import Comparison, MeanEstimate, Summary

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


def report_markdown(name: str, summary: Summary, warnings: Sequence[str]) -> str:
    """A run's headline, its weakest tools and nodes, and its warnings."""
    counts, overall = summary.counts, summary.overall
    rows: list[tuple[str, object]] = [
        ("candidate", summary.run.model or "?"),
        ("exact (exactly right)", rate(overall.strict)),
        ("agreement (partial credit)", rate(overall.agreement)),
        ("intervals", interval_label(counts.sessions)),
    ]
    if summary.topic_agreement.n:
        rows.append(("router agreement", rate_with_count(summary.topic_agreement)))
    rows += [
        ("decided", f"{counts.decided} of {counts.records} answers, {counts.sessions} sessions"),
        ("text not judged", counts.no_judge),
        ("unscored", counts.unscored),
        ("infrastructure errors", counts.infra_errors),
    ]
    if counts.judge_errors:
        rows.append(("judge errors (the judge could not be asked)", counts.judge_errors))
    if counts.no_judge:
        rows.append(("text_similarity (not a verdict)", rate(summary.text_similarity)))
    if summary.labels:
        rows.append(("labels", labels_text(summary.labels)))
    parts = [
        f"### abt report: {cell(name)}\n",
        table(("measure", "value"), rows),
        "Buckets: "
        + (" · ".join(f"{cell(k)} {v}" for k, v in summary.buckets.items()) or "none")
        + "\n",
    ]
    for grouping, groups in (("tool", summary.by_tool), ("node", summary.by_node)):
        weakest = sorted(groups.items(), key=lambda item: (item[1].agreement.mean or 0.0, item[0]))
        if len(weakest) > 1:
            parts.append(
                f"Lowest agreement by {grouping}:\n\n"
                + table(
                    (grouping, "n", "agreement"),
                    [
                        (label, g.agreement.n, rate(g.agreement))
                        for label, g in weakest[:TOP_GROUPS]
                    ],
                )
            )
    parts += _warnings(warnings)
    return "\n".join(parts)


def compare_markdown(compare: Comparison, checks: Sequence[Check] = ()) -> str:
    """A comparison's headline, its McNemar test, its largest per-group changes."""
    a, b, counts, test = compare.a, compare.b, compare.counts, compare.mcnemar
    figures = [("exact", compare.strict), ("agreement", compare.agreement)]
    topic = compare.topic_agreement
    if topic.a.n:
        figures.append((f"router agreement (n {topic.a.n})", topic))
    parts = [
        f"### abt compare: {cell(a.name)} → {cell(b.name)}\n",
        table(
            ("", f"A ({a.model})", f"B ({b.model})", "B − A", "p (by session)"),
            [
                (name, rate(r.a), rate(r.b), signed(r.difference), p_text(r.p_value))
                for name, r in figures
            ],
        ),
        f"{counts.paired} paired answers in {counts.sessions} sessions. Strict flips: "
        f"{test.a_right_b_wrong} right → wrong, {test.a_wrong_b_right} wrong → right "
        f"(McNemar exact p = {test.p_value:.4g}, unclustered: every pair taken as "
        "independent).\n",
    ]
    if a.labels or b.labels:
        parts.append(f"Labels: A {cell(labels_text(a.labels))} · B {cell(labels_text(b.labels))}\n")
    for grouping, rows in (("tool", compare.by_tool), ("node", compare.by_node)):
        if len(rows) > 1:
            parts.append(
                f"Largest changes by {grouping}:\n\n"
                + table(
                    (grouping, "n", "A", "B", "B − A"),
                    [
                        (r.label, r.n, _mean(r.a), _mean(r.b), signed(r.difference))
                        for r in rows[:TOP_GROUPS]
                    ],
                )
            )
    if counts.only_in_a or counts.only_in_b or counts.not_comparable:
        parts.append(
            f"Not compared: {counts.only_in_a} only in A, {counts.only_in_b} "
            f"only in B, {counts.not_comparable} not decided on both sides.\n"
        )
    if checks:
        parts.append(gate_markdown(checks, heading=False))
    parts += _warnings(compare.warnings)
    return "\n".join(parts)


def gate_markdown(
    checks: Sequence[Check], heading: bool = True, name: str = "", coverage: str = ""
) -> str:
    """Passed or failed, what the run's figures cover, and each bar with its value."""
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
    if coverage:
        title += f"\n\n{cell(coverage)}"
    return (f"### abt gate\n\n{title}\n\n" if heading else f"{title}\n\n") + text


def _mean(estimate: MeanEstimate) -> str:
    return "n/a" if estimate.mean is None else f"{estimate.mean:.3f}"


def _warnings(warnings: Sequence[str]) -> list[str]:
    if not warnings:
        return []
    return ["Warnings:\n\n" + "".join(f"- {cell(w)}\n" for w in warnings)]
