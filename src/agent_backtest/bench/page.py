"""``report.html`` of a bench run: one offline page, read without any script.

Figures first (pass^k and pass@k with their intervals, rewards, costs, errors), then every case
with its rollouts side by side, each as its transcript under its reward breakdown. Cases fold
with ``<details>``, so the page needs no script; every text from a trace goes through
:func:`~agent_backtest.reporting.markup.tag`, which escapes it, and the page's content security
policy allows no script at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO

import orjson

from agent_backtest.bench.models import EpisodeRecord, GradeRecord
from agent_backtest.bench.reading import BenchRun, error_kind, passed
from agent_backtest.reporting.assets import page
from agent_backtest.reporting.figures import clustered_rate as figure
from agent_backtest.reporting.markup import Markup, escape, join, tag
from agent_backtest.reporting.page_parts import (
    count_card,
    count_rows,
    facts_list,
    head_row,
    metric_card,
    passk_chart,
    passk_table,
)
from agent_backtest.reporting.report_page import warnings_section
from agent_backtest.trace import Message

if TYPE_CHECKING:
    from agent_backtest.bench.results import BenchSummary, CaseMean

# Rollouts sit side by side in columns at least this wide; a wider run scrolls sideways.
ROLLOUT_STYLE = """
.rollouts { display: grid; gap: 12px; overflow-x: auto; }
.rollout { border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; min-width: 0; }
details.case { border-top: 1px solid var(--line); padding: 6px 0; }
details.case > summary { cursor: pointer; }
"""
COST_NAMES = {
    "seconds": "seconds",
    "steps": "agent turns",
    "tool_calls": "tool calls",
    "model_calls": "model calls",
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
}


# Where the cases go in the page's text. Every text of a trace is escaped, so this comment
# cannot come from one; and the cases are not in the text it is looked for in.
_CASES_HERE = Markup("<!-- the cases -->")


def write_page(handle: BinaryIO, run: BenchRun, summary: BenchSummary) -> None:
    """The report page of a bench run as HTML, written a case at a time: only one case's
    transcripts are held at once, however many episodes the run has."""
    title = f"abt bench report: {run.path.name}"
    body = join(
        [
            tag("style", Markup(ROLLOUT_STYLE)),
            tag("h1", title),
            facts_section(summary),
            warnings_section(summary.warnings),
            headline_section(summary),
            passk_section(summary),
            breakdown_section(summary),
            tag("section", tag("h2", "Cases"), _CASES_HERE, attrs={"id": "cases"}),
            tag("footer", f"agent-backtest · {summary.run.commit or 'commit not recorded'}"),
        ]
    )
    before, after = page(escape(title), body).split(_CASES_HERE, 1)
    handle.write(before.encode())
    for case in cases_of(run):
        handle.write(case.encode())
    handle.write(after.encode())


def facts_section(summary: BenchSummary) -> Markup:
    """What was run: benchmark, release, models, status, commit and the counts."""
    run, counts = summary.run, summary.counts
    benchmark = " ".join(part for part in (run.benchmark, run.benchmark_version) if part)
    models = [tag("div", f"{role}: ", tag("code", model)) for role, model in run.models.items()]
    facts = [
        ("benchmark", benchmark or "not recorded"),
        ("release", run.release or "not recorded"),
        ("models", models or "not recorded"),
        ("set up", run.setup() or "not recorded"),
        ("status", run.status or "not recorded"),
        ("run", run.run_id or "not recorded"),
        (
            "episodes",
            f"{counts.episodes} episodes of {counts.cases} graded cases: {counts.graded} graded, "
            f"{counts.passed} passed, {counts.errors} engineering errors, "
            f"{counts.ungraded} not graded yet",
        ),
    ]
    return tag("section", facts_list(facts), attrs={"id": "facts"})


def headline_section(summary: BenchSummary) -> Markup:
    """pass^1, the mean reward, errors and episodes not graded yet."""
    counts = summary.counts
    cards = []
    first = summary.pass_hat_k.get("1")
    if first is not None:
        cards.append(_metric("pass_hat_1", "pass^1", first, f"over {first.cases} cases"))
    cards.append(
        _metric(
            "reward",
            "mean reward",
            summary.reward,
            f"{summary.reward.n} graded episodes of {summary.reward.cases} cases",
        )
    )
    errors = ", ".join(f"{k} {v}" for k, v in counts.errors_by_kind.items())
    cards.append(
        count_card("errors", "engineering errors", counts.errors, errors or "no reward, not a zero")
    )
    cards.append(count_card("ungraded", "not graded yet", counts.ungraded, "left out of the means"))
    explained = tag(
        "p",
        "A rollout passes when its reward is 1. pass^k is the chance that k rollouts of a case "
        "all pass, pass@k that at least one does, each averaged over the cases with at least k "
        "graded rollouts. The brackets are 95% intervals with cases as the units, since the "
        "rollouts of one case are not independent draws.",
        attrs={"class": "muted"},
    )
    return tag("section", tag("div", cards, attrs={"class": "headline"}), explained)


def _metric(key: str, name: str, estimate: CaseMean, note: str) -> Markup:
    return metric_card(key, name, estimate.mean, figure(estimate).partition(" ")[2], note)


def passk_section(summary: BenchSummary) -> Markup:
    """pass^k and pass@k for each k, with how many cases each rests on, and a chart."""
    return tag(
        "section",
        tag("h2", "pass^k and pass@k"),
        tag(
            "div",
            tag("div", passk_table(summary.pass_hat_k, summary.pass_at_k, "cases")),
            tag("div", passk_chart(summary.pass_hat_k)),
            attrs={"class": "grid2"},
        ),
        attrs={"id": "pass-k"},
    )


def breakdown_section(summary: BenchSummary) -> Markup:
    """Reward components, per-episode costs and errors by kind."""
    components = tag(
        "table",
        head_row("component", "mean", "episodes", "not graded", numeric=2),
        [
            _figure_row("component", name, name, figure(c.mean), c.mean.n, c.not_graded)
            for name, c in summary.components.items()
        ],
        attrs={"id": "components"},
    )
    costs = tag(
        "table",
        head_row("per episode", "mean", "episodes", numeric=1),
        [
            _figure_row("cost", name, COST_NAMES.get(name, name), _plain(e), e.n)
            for name, e in summary.per_episode.items()
        ],
        attrs={"id": "costs"},
    )
    errors = tag(
        "table",
        head_row("engineering error", "episodes", numeric=1),
        count_rows(summary.counts.errors_by_kind),
        attrs={"id": "errors"},
    )
    return tag(
        "section",
        tag("h2", "Rewards, costs and errors"),
        tag(
            "div",
            tag("div", tag("h3", "Reward components"), components),
            tag("div", tag("h3", "Per graded episode"), costs, tag("h3", "Errors"), errors),
            attrs={"class": "grid2"},
        ),
    )


def _figure_row(key: str, name: str, label: str, shown: str, *counts: int) -> Markup:
    """A row of a figures table, marked ``data-<key>=<name>``: the label, the figure in
    monospace, then the counts it rests on."""
    return tag(
        "tr",
        tag("td", label),
        tag("td", shown, attrs={"class": "mono"}),
        [tag("td", n, attrs={"class": "num"}) for n in counts],
        attrs={f"data-{key}": name},
    )


def _plain(estimate: CaseMean) -> str:
    """A mean of seconds or counts: ``12.4 [10.1, 14.7]``; ``not recorded`` for none."""
    if estimate.mean is None:
        return "not recorded"
    if estimate.ci95 is None:
        return f"{estimate.mean:.3g} (no interval: {estimate.cases} case)"
    low, high = estimate.ci95
    return f"{estimate.mean:.3g} [{low:.3g}, {high:.3g}]"


def cases_of(run: BenchRun) -> Iterator[Markup]:
    """Every case, its rollouts side by side in rollout order, rendered one after another."""
    by_case: dict[str, list[EpisodeRecord]] = {}
    for episode in run.episodes:
        by_case.setdefault(episode.case_id, []).append(episode)
    for case, episodes in by_case.items():
        yield _case(run, case, sorted(episodes, key=lambda e: e.rollout))


def _case(run: BenchRun, case: str, episodes: list[EpisodeRecord]) -> Markup:
    grades = [run.grade(episode) for episode in episodes]
    pills = [_pill(episode, grade) for episode, grade in zip(episodes, grades, strict=True)]
    verdicts = [passed(grade.reward) if grade else None for grade in grades]
    graded = [v for v in verdicts if v is not None]
    columns = [
        _rollout(run, episode, grade) for episode, grade in zip(episodes, grades, strict=True)
    ]
    return tag(
        "details",
        tag(
            "summary",
            tag("b", f"case {case}"),
            f" · {sum(graded)} of {len(graded)} graded rollouts passed ",
            pills,
        ),
        tag(
            "div",
            columns,
            attrs={
                "class": "rollouts",
                "style": f"grid-template-columns: repeat({len(columns)}, minmax(300px, 1fr))",
            },
        ),
        attrs={"class": "case", "data-case": case},
    )


def _pill(episode: EpisodeRecord, grade: GradeRecord | None) -> Markup:
    kind = error_kind(episode, grade)
    if kind is not None:
        return tag("span", f"r{episode.rollout}: {kind}", attrs={"class": "pill err"})
    if grade is None or grade.reward is None:
        return tag("span", f"r{episode.rollout}: not graded", attrs={"class": "pill"})
    good = passed(grade.reward)
    return tag(
        "span",
        f"r{episode.rollout}: {grade.reward:.3g}",
        attrs={"class": f"pill {'ok' if good else 'no'}"},
    )


def _rollout(run: BenchRun, episode: EpisodeRecord, grade: GradeRecord | None) -> Markup:
    """One rollout: its reward breakdown, then its transcript."""
    facts = [
        ("reward", _pill(episode, grade)),
        ("ended by", episode.ended_by),
        ("seed", episode.seed),
        (
            "calls",
            f"{episode.steps} turns, {episode.model_calls} model calls, "
            f"{episode.tool_calls} tool calls, {episode.seconds:.3g} s",
        ),
    ]
    if grade is not None:
        for name, value in grade.components.items():
            reason = grade.reasons.get(name)
            shown = "not graded" if value is None else f"{value:.3g}"
            facts.append((name, shown + (f" — {reason}" if reason else "")))
    if episode.error is not None:
        facts.append(("error", f"{episode.error.kind}: {episode.error.detail}"))
    trace = run.trace(episode)
    messages = (
        [_message(m) for m in trace.messages]
        if trace is not None
        else [tag("p", f"no readable trace at {episode.trace}", attrs={"class": "muted"})]
    )
    return tag(
        "div",
        tag("h3", f"rollout {episode.rollout}"),
        facts_list(facts),
        messages,
        attrs={"class": "rollout", "data-episode": episode.episode_id},
    )


def _message(message: Message) -> Markup:
    """One message of a transcript: its role, text and tool calls."""
    calls = [
        tag(
            "div",
            tag("span", call.name, attrs={"class": "call-name"}),
            tag("pre", _arguments(call.arguments, call.arguments_raw)),
            attrs={"class": "call"},
        )
        for call in message.tool_calls or []
    ]
    text = message.text()
    shown = tag("pre", text) if text else None
    if message.role in ("system", "developer") and shown is not None:
        # the policy opens every rollout: folded, so the conversations line up
        shown = tag("details", tag("summary", f"{len(text):,} characters"), shown)
    return tag(
        "div",
        tag("div", message.role, attrs={"class": "role"}),
        shown,
        calls,
        attrs={"class": f"message role-{message.role}"},
    )


def _arguments(arguments: object, raw: str | None) -> str:
    if raw is not None:
        return raw
    return orjson.dumps(arguments, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
