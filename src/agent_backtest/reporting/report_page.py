"""``report.html``: one self-contained page for one scored run.

The header, breakdowns and charts are rendered here as static, escaped HTML; the unit list and
its drill-down are drawn by the page script from JSON blocks, paginated and lazily, so a run of
10,000 units opens quickly. The blocks are copied into the page from where they were written as
the run was read, so the page is never whole in memory.
"""

from __future__ import annotations

from typing import BinaryIO

from agent_backtest.reporting.assets import asset, page_around
from agent_backtest.reporting.charts import RateBar, count_chart, histogram, rate_chart
from agent_backtest.reporting.figures import (
    interval,
    interval_label,
    labels_text,
    percentile,
    quantity,
    rate,
)
from agent_backtest.reporting.latency import CandidateFigures
from agent_backtest.reporting.loading import ScoredRun
from agent_backtest.reporting.markup import Markup, escape, join, tag
from agent_backtest.reporting.page_data import PageData
from agent_backtest.reporting.page_parts import count_card, metric_card
from agent_backtest.runs import MeanEstimate, Summary
from agent_backtest.runs.spending import spent_text
from agent_backtest.runs.summary import NOT_RECORDED, GroupFigures


def breakdowns(summary: Summary) -> list[tuple[str, str, dict[str, GroupFigures]]]:
    """(grouping, title, groups) of each breakdown worth a table.

    Candidate models need two to compare; agent versions show when there are several or any
    trace recorded one, since a single "(not recorded)" row says nothing.
    """
    found = [
        ("kind", "Agreement by kind", summary.by_kind),
        ("node", "Agreement by node", summary.by_node),
        ("tool", "Agreement by production's tool", summary.by_tool),
        ("split", "Agreement by split", summary.by_split),
    ]
    if len(summary.by_model) > 1:
        found.append(("model", "Agreement by candidate model", summary.by_model))
    if shows_agent_versions(summary):
        found.append(("agent_version", "Agreement by agent version", summary.by_agent_version))
    return [(grouping, title, groups) for grouping, title, groups in found if groups]


def shows_agent_versions(summary: Summary) -> bool:
    """True when the run tells agent versions apart: several of them, or any recorded one."""
    versions = summary.by_agent_version
    return len(versions) > 1 or any(label != NOT_RECORDED for label in versions)


def write_report_page(
    handle: BinaryIO,
    run: ScoredRun,
    data: PageData,
    candidate: CandidateFigures,
    warnings: list[str],
) -> None:
    """Write the report page of ``run`` to ``handle``: the page's top, then its JSON blocks."""
    body = join(
        [
            tag("h1", f"abt report: {run.path.name}"),
            compared_section(run, data),
            headline_section(run.summary),
            warnings_section(warnings),
            breakdown_section(run.summary),
            distribution_section(run, candidate),
            units_section(),
            tag(
                "footer",
                f"agent-backtest {run.manifest.code_version} · scorer "
                f"{run.summary.scoring.scorer} · scoring id {run.summary.scoring.scoring_id}",
            ),
        ]
    )
    before, after = page_around(f"abt report: {escape(run.path.name)}", body, asset("report.js"))
    handle.write(before.encode("utf-8"))
    for name, chunks in data.blocks():
        opening, closing = tag(
            "script", Markup("\n"), attrs={"type": "application/json", "id": name}
        ).split("\n")
        handle.write(opening.encode("utf-8"))
        for chunk in chunks:
            handle.write(chunk)
        handle.write(closing.encode("utf-8"))
    handle.write(after.encode("utf-8"))


def compared_section(run: ScoredRun, data: PageData) -> Markup:
    """What was compared: candidate, production, judge, inputs, patch, k, dates, labels."""
    config, manifest, summary = run.manifest.config, run.manifest, run.summary
    scoring = summary.scoring
    judge = scoring.judge or "none (text answers compared by token overlap)"
    if scoring.fallback_judge:
        judge += f"; fallback {scoring.fallback_judge}"
    inputs = [
        tag("div", tag("code", item.path), f" sha256 {item.sha256[:12]}…")
        for item in manifest.inputs
    ] or "units file given directly"
    patch = config.patch.model_dump() if config.patch else None
    facts = [
        ("candidate", tag("code", summary.run.model or "?")),
        ("production", ", ".join(sorted(data.recorded_models)) or "not recorded"),
        ("judge", judge),
        ("inputs", inputs),
        (
            "patch",
            tag("code", patch if isinstance(patch, str) else repr(patch)) if patch else "none",
        ),
        ("repeats (k)", f"{config.k} (seed {config.seed} + repeat)"),
        (
            "run",
            f"{manifest.status}, started {manifest.created_at:%Y-%m-%d %H:%M:%S} UTC"
            + (
                f", finished {manifest.finished_at:%Y-%m-%d %H:%M:%S} UTC"
                if manifest.finished_at
                else ""
            ),
        ),
        (
            "units",
            f"{summary.counts.units} units in {summary.counts.sessions} sessions, "
            f"{summary.counts.records} answers",
        ),
    ]
    if summary.labels:
        facts.insert(1, ("labels", tag("code", labels_text(summary.labels))))
    if summary.spent:
        facts.append(("spent", spent_text(summary.spent)))
    profile = run.directory.profile_path
    if profile.exists():
        facts.append(("profile", tag("a", profile.name, attrs={"href": profile.name})))
    return tag(
        "section",
        tag("dl", [(tag("dt", k), tag("dd", v)) for k, v in facts], attrs={"class": "facts"}),
        attrs={"id": "compared"},
    )


def headline_section(summary: Summary) -> Markup:
    """Agreement, strict and router agreement with intervals, errors and unscored answers."""
    counts = summary.counts
    overall = summary.overall
    errors = ", ".join(f"{k} {v}" for k, v in counts.infra_errors_by_kind.items())
    cards = [
        _metric(
            "strict",
            "exact",
            overall.strict,
            "exactly right: same tool and every argument equal, or the same text",
        ),
        _metric(
            "agreement",
            "agreement",
            overall.agreement,
            f"with partial credit for close calls; {counts.coverage()}",
        ),
    ]
    topic = summary.topic_agreement
    if topic.n:
        cards.append(
            _metric(
                "topic_agreement",
                "router agreement",
                topic,
                f"same routing target on {topic.n} router answers, {topic.sessions} sessions",
            )
        )
    cards += [
        count_card(
            "infra_errors",
            "infrastructure errors",
            counts.infra_errors,
            errors or "not scored, never counted as disagreement",
        ),
        count_card("unscored", "unscored", counts.unscored, "left out of the means"),
    ]
    if counts.judge_errors:
        judge_kinds = ", ".join(f"{k} {v}" for k, v in counts.judge_errors_by_kind.items())
        cards.append(
            count_card(
                "judge_errors",
                "judge errors",
                counts.judge_errors,
                f"the judge could not be asked: {judge_kinds}; not scored, never a verdict",
            )
        )
    if counts.no_judge:
        cards.append(
            _metric(
                "text_similarity",
                "text not judged",
                summary.text_similarity,
                f"token overlap of {counts.no_judge} answers no judge decided: not a verdict, "
                "not in agreement",
            )
        )
    if summary.suspected_injection:
        cards.append(
            count_card(
                "suspected_injection",
                "aimed at the judge",
                summary.suspected_injection,
                "answers whose text seems to address the judge (suspected_injection)",
            )
        )
    explained = tag(
        "p",
        "Exact is the share of decided answers exactly right: production's tool with equal "
        "arguments, or text that means the same. Agreement is their mean score with partial "
        "credit for a close call (0 otherwise). The brackets are "
        f"{interval_label(counts.sessions)}: the steps of one conversation are not "
        "independent draws.",
        attrs={"class": "muted", "id": "headline-explained"},
    )
    bounds = summary.undecided_bounds
    either_way = (
        tag("p", bounds.text(counts.records), attrs={"class": "muted", "id": "undecided-bounds"})
        if bounds is not None
        else ""
    )
    return tag(
        "section",
        tag("div", cards, attrs={"class": "headline", "id": "headline"}),
        either_way,
        explained,
    )


def _metric(key: str, name: str, estimate: MeanEstimate, note: str) -> Markup:
    """A headline card for one of the summary's means, with its interval."""
    mean = estimate.mean
    return metric_card(key, name, mean, interval(estimate) if mean is not None else "", note)


def report_warnings(run: ScoredRun, data: PageData, late: int) -> list[str]:
    """Everything that qualifies the numbers: scoring's warnings and the run's own state
    (``late``: the answers that arrived after the last scoring)."""
    warnings = list(run.summary.warnings)
    if data.reconstructed:
        warnings.append(
            f"{data.reconstructed} units were reconstructed, not recorded as sent (from a "
            "Responses API chain's server-side history, or an agent's event log): the "
            "request may differ from what production sent"
        )
    if data.tools_missing:
        warnings.append(
            f"{data.tools_missing} units lack the tool definitions production "
            "offered: replay with --tools FILE to supply them"
        )
    if run.manifest.status != "completed":
        warnings.append(
            f"the run is {run.manifest.status}: these numbers cover the answers "
            f"that finished; abt replay --resume {run.path} completes it"
        )
    if late:
        warnings.append(
            f"{late} answers arrived after the last scoring and are not in these "
            f"numbers: run abt score {run.path}"
        )
    if run.summary.counts.no_judge:
        warnings.append(
            f"{run.summary.counts.no_judge} text answers were not judged (their token overlap is "
            "shown apart, not in agreement): score with --judge MODEL to decide them"
        )
    return warnings


def warnings_section(warnings: list[str]) -> Markup:
    """The warnings list, or nothing."""
    if not warnings:
        return Markup("")
    return tag(
        "ul", [tag("li", w) for w in warnings], attrs={"class": "warnings", "id": "warnings"}
    )


def breakdown_section(summary: Summary) -> Markup:
    """A table and a chart per grouping, then the bucket counts."""
    parts: list[Markup] = [tag("h2", "Breakdowns")]
    for grouping, title, groups in breakdowns(summary):
        bars = [
            RateBar(label, g.agreement.mean, g.agreement.low, g.agreement.high, g.agreement.n)
            for label, g in groups.items()
        ]
        parts.append(
            tag(
                "div",
                tag("div", tag("h3", title), _group_table(grouping, groups)),
                tag("div", rate_chart(bars, title)),
                attrs={"class": "grid2"},
            )
        )
    buckets = sorted(summary.buckets.items(), key=lambda item: -item[1])
    table = tag(
        "table",
        tag("tr", tag("th", "bucket"), tag("th", "answers", attrs={"class": "num"})),
        [tag("tr", tag("td", name), tag("td", n, attrs={"class": "num"})) for name, n in buckets],
        attrs={"id": "buckets"},
    )
    parts.append(
        tag(
            "div",
            tag("div", tag("h3", "Buckets"), table),
            tag("div", count_chart(buckets, "Answers by bucket")),
            attrs={"class": "grid2"},
        )
    )
    return tag("section", parts, attrs={"id": "breakdowns"})


def _group_table(grouping: str, groups: dict[str, GroupFigures]) -> Markup:
    head = tag(
        "tr",
        tag("th", grouping.replace("_", " ")),
        tag("th", "n", attrs={"class": "num"}),
        tag("th", "sessions", attrs={"class": "num"}),
        tag("th", "agreement"),
        tag("th", "strict"),
    )
    rows = [
        tag(
            "tr",
            tag("td", label),
            tag("td", g.agreement.n, attrs={"class": "num"}),
            tag("td", g.agreement.sessions, attrs={"class": "num"}),
            tag("td", rate(g.agreement), attrs={"class": "mono"}),
            tag("td", rate(g.strict), attrs={"class": "mono"}),
            attrs={"data-group": label},
        )
        for label, g in groups.items()
    ]
    return tag("table", head, rows, attrs={"id": f"by-{grouping.replace('_', '-')}"})


def distribution_section(run: ScoredRun, candidate: CandidateFigures) -> Markup:
    """The candidate's latencies and token counts: percentiles and histograms."""
    series = [
        ("latency", "ms", candidate.latencies.tolist()),
        ("output tokens", "tokens", candidate.output_tokens.tolist()),
        ("input tokens", "tokens", candidate.input_tokens.tolist()),
    ]
    cached = candidate.cached
    loading = run.manifest.candidate_counts.model_load_seconds
    head = tag(
        "tr",
        *(
            tag("th", h, attrs={"class": "num" if h != "measure" else None})
            for h in ("measure", "n", "p50", "p90", "p99", "max")
        ),
    )
    rows = [
        tag(
            "tr",
            tag("td", name),
            tag("td", len(values), attrs={"class": "num"}),
            *(
                tag("td", quantity(percentile(values, share), unit), attrs={"class": "num"})
                for share in (0.5, 0.9, 0.99, 1.0)
            ),
        )
        for name, unit, values in series
    ]
    charts = [
        tag(
            "div",
            tag("h3", f"Candidate {name} ({unit})"),
            histogram(values, f"Candidate {name}", unit),
        )
        for name, unit, values in series
        if values
    ]
    notes = []
    if cached:
        notes.append(f"{cached} answers came from the response cache and have no latency.")
    if loading:
        notes.append(
            f"The local model took {quantity(loading * 1000, 'ms')} to load before its first "
            "answer; that time is in no latency here."
        )
    note = tag("p", " ".join(notes), attrs={"class": "muted"}) if notes else None
    return tag(
        "section",
        tag("h2", "Candidate latency and tokens"),
        tag("table", head, rows, attrs={"id": "distributions"}),
        note,
        tag("div", charts, attrs={"class": "grid2"})
        if charts
        else tag("p", "No latencies or token counts were recorded.", attrs={"class": "muted"}),
        attrs={"id": "latency"},
    )


def units_section() -> Markup:
    """The skeleton the page script fills: filters, the paginated list and the drill-down."""
    filters = [
        tag("label", label, tag("select", attrs={"id": f"filter-{key}"}))
        for key, label in (
            ("bucket", "bucket"),
            ("node", "node"),
            ("tool", "production's tool"),
            ("kind", "kind"),
        )
    ]
    filters.append(
        tag(
            "label",
            "search",
            tag(
                "input",
                attrs={
                    "id": "filter-text",
                    "type": "search",
                    "placeholder": "id, session, text, arguments",
                },
            ),
        )
    )
    return tag(
        "section",
        tag("h2", "Units"),
        tag("div", filters, attrs={"class": "filters"}),
        tag("div", attrs={"class": "pager", "id": "pager"}),
        tag("table", tag("thead"), tag("tbody"), attrs={"id": "unit-table"}),
        tag("div", attrs={"id": "detail", "hidden": "hidden"}),
        tag("noscript", "The unit list needs JavaScript; results.csv has every unit."),
        attrs={"id": "units"},
    )
