"""``report.html`` of a simulate run: one offline page, every conversation as a transcript.

The pass rate overall and per family first, with intervals and counts, then each flow: its
verdict (owner, category, evidence, reproduction) above its transcript, the failed turns marked.
Everything is rendered here, every text through :func:`~agent_backtest.reporting.markup.tag`
(which escapes it), so a conversation holding ``<script>`` is shown as text. The one inline
script only hides and shows conversations by the filters' values; the page's content security
policy allows that script (by its hash) and no network.

Each flow's section has the anchor ``flow-<flow_id>`` for links from elsewhere (the ledger).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import orjson

from agent_backtest.reporting.assets import page
from agent_backtest.reporting.charts import RateBar, rate_chart
from agent_backtest.reporting.figures import clustered_rate as figure
from agent_backtest.reporting.figures import quantity
from agent_backtest.reporting.markup import Markup, escape, join, tag
from agent_backtest.reporting.page_parts import count_rows, facts_list, head_row, metric_card
from agent_backtest.reporting.report_page import warnings_section
from agent_backtest.simulate.manifest import SimulateManifest
from agent_backtest.simulate.models import (
    ConversationRecord,
    Flow,
    ToolActivity,
    TurnRecord,
    Verdict,
)
from agent_backtest.simulate.repeats_page import repeats_section
from agent_backtest.simulate.summary import PassRate, SimulateSummary, flow_state

NO_OWNER = "(none)"
STATE_LABELS = {"unjudged": "not judged", "not_played": "not played"}
"""How the page names the states of a flow without a verdict."""
STYLE = """
.conversation { border-top: 1px solid var(--line); padding: 8px 0 14px; }
.conversation[hidden] { display: none; }
.conversation > h3 { margin: 4px 0; }
.turn { border-left: 3px solid var(--line); padding: 2px 0 2px 10px; margin: 8px 0; }
.turn.failed { border-color: var(--bad); background: #fdf2f1; }
.turn .when { color: var(--muted); font-size: 12px; }
.verdict { margin: 6px 0; }
.error { color: var(--bad); }
"""
# Shows the conversations whose data-verdict, data-owner and data-family match every filter.
SCRIPT = """"use strict";
(function () {
  const items = Array.from(document.querySelectorAll("section.conversation"));
  const keys = ["verdict", "owner", "family"];
  const selects = keys.map((key) => document.getElementById("filter-" + key));
  const count = document.getElementById("shown-count");
  function apply() {
    let shown = 0;
    for (const item of items) {
      const match = keys.every((key, i) => {
        const wanted = selects[i].value;
        return !wanted || item.dataset[key] === wanted;
      });
      item.hidden = !match;
      if (match) shown += 1;
    }
    count.textContent = shown + " of " + items.length + " conversations shown";
  }
  for (const select of selects) select.addEventListener("change", apply);
  apply();
})();
"""


def render_page(
    name: str,
    flows: Sequence[Flow],
    conversations: Mapping[str, ConversationRecord],
    verdicts: Mapping[str, Verdict],
    summary: SimulateSummary,
    manifest: SimulateManifest | None,
) -> str:
    """The report page of a simulate run as HTML text."""
    title = f"abt simulate report: {name}"
    body = join(
        [
            tag("style", Markup(STYLE)),
            tag("h1", title),
            facts_section(manifest, summary),
            warnings_section(summary.warnings),
            rates_section(summary),
            repeats_section(summary),
            failures_section(summary),
            conversations_section(flows, conversations, verdicts),
            tag("footer", "agent-backtest"),
        ]
    )
    return page(escape(title), body, script=SCRIPT)


def facts_section(manifest: SimulateManifest | None, summary: SimulateSummary) -> Markup:
    """What was played through what: target, status, roles and the counts."""
    overall = summary.overall
    facts: list[tuple[str, object]] = []
    if manifest is not None:
        facts += [
            ("target", f"{manifest.target.name} ({manifest.target.type})"),
            ("status", manifest.status),
            ("flows file", tag("code", manifest.flows.path)),
        ]
        facts += [(role, tag("code", r.model)) for role, r in manifest.roles.items()]
    facts.append(
        (
            "flows",
            f"{overall.flows} flows: {overall.passed} passed, {overall.failed} failed, "
            + _left_out(overall),
        )
    )
    return tag("section", facts_list(facts), attrs={"id": "facts"})


def rates_section(summary: SimulateSummary) -> Markup:
    """The cards (overall, then per family), a chart, and what the brackets mean."""
    cards = [_card("overall", "pass rate", summary.overall)]
    cards += [_card(f"family:{name}", name, rate) for name, rate in summary.families.items()]
    bars = [
        RateBar(name, r.rate.mean, *(r.rate.ci95 or (None, None)), r.rate.n)
        for name, r in summary.families.items()
    ]
    explained = tag(
        "p",
        "The pass rate is over the flows judged pass or fail; uncertain, unjudged and unplayed "
        "flows are counted apart, never as failures. The brackets are 95% intervals with seeds "
        "as the units, since flows made from one seed are not independent draws.",
        attrs={"class": "muted"},
    )
    chart = rate_chart(bars, "pass rate by family") if len(bars) > 1 else ""
    return tag(
        "section",
        tag("div", cards, attrs={"class": "headline"}),
        explained,
        chart,
        attrs={"id": "rates"},
    )


def _card(key: str, name: str, rate: PassRate) -> Markup:
    return metric_card(
        key,
        name,
        rate.rate.mean,
        figure(rate.rate).partition(" ")[2],
        f"{rate.passed} of {rate.decided} decided passed · {rate.rate.seeds} seeds · "
        f"{rate.flows} flows",
        _left_out(rate),
    )


def _left_out(rate: PassRate) -> str:
    """The flows a pass rate leaves out, counted by why."""
    return f"{rate.uncertain} uncertain, {rate.unjudged} not judged, {rate.not_played} not played"


def failures_section(summary: SimulateSummary) -> Markup:
    """Failures by owner and by category, and uncertain verdicts by reason."""
    tables = [
        _count_table(title, column, counts)
        for title, column, counts in (
            ("Failures by owner", "owner", summary.failures_by_owner),
            ("Failures by category", "category", summary.failures_by_category),
            ("Uncertain by reason", "reason", summary.uncertain_by_reason),
            ("Why conversations ended", "stop reason", summary.stop_reasons),
        )
    ]
    return tag(
        "section",
        tag("h2", "Failures"),
        tag("div", tables, attrs={"class": "grid2"}),
        attrs={"id": "failures"},
    )


def _count_table(title: str, column: str, counts: Mapping[str, int]) -> Markup:
    return tag(
        "div",
        tag("h3", title),
        tag(
            "table",
            head_row(column, "flows", numeric=1),
            count_rows(counts),
            attrs={"data-counts": column},
        ),
    )


def conversations_section(
    flows: Sequence[Flow],
    conversations: Mapping[str, ConversationRecord],
    verdicts: Mapping[str, Verdict],
) -> Markup:
    """The filters, then every flow of the run in its order."""
    states = {flow.id: _state_label(flow, conversations, verdicts) for flow in flows}
    owners = {flow.id: _owner_of(verdicts.get(flow.id)) for flow in flows}
    filters = [
        _select("verdict", "verdict", states.values()),
        _select("owner", "owner", owners.values()),
        _select("family", "family", (flow.family for flow in flows)),
        tag("span", attrs={"id": "shown-count", "class": "muted"}),
    ]
    items = [
        _conversation(flow, conversations.get(flow.id), verdicts.get(flow.id), states[flow.id])
        for flow in flows
    ]
    return tag(
        "section",
        tag("h2", "Conversations"),
        tag("div", filters, attrs={"class": "filters"}),
        items,
        attrs={"id": "conversations"},
    )


def _select(key: str, label: str, values: Iterable[str]) -> Markup:
    """A filter: "all", then each value found."""
    options = [tag("option", "all", attrs={"value": ""})]
    options += [tag("option", v, attrs={"value": v}) for v in sorted(set(values))]
    return tag("label", label, tag("select", options, attrs={"id": f"filter-{key}"}))


def _state_label(
    flow: Flow, conversations: Mapping[str, ConversationRecord], verdicts: Mapping[str, Verdict]
) -> str:
    """The flow's verdict as the page shows and filters it."""
    state = flow_state(flow, conversations, verdicts)
    return STATE_LABELS.get(state, state)


def _owner_of(verdict: Verdict | None) -> str:
    return verdict.owner if verdict is not None and verdict.owner else NO_OWNER


def _conversation(
    flow: Flow, record: ConversationRecord | None, verdict: Verdict | None, state: str
) -> Markup:
    """One flow: its header, its verdict, then its transcript."""
    pill = {"pass": "ok", "fail": "no", "uncertain": "err"}.get(state, "")
    failed = set(verdict.failed_turns) if verdict is not None else set()
    header = tag(
        "h3",
        tag("a", flow.id, attrs={"href": f"#flow-{flow.id}"}),
        f" · {flow.family} ",
        tag("span", state, attrs={"class": f"pill {pill}".strip()}),
    )
    body: list[object] = [header]
    if flow.purpose:
        body.append(tag("div", flow.purpose, attrs={"class": "muted"}))
    if verdict is not None:
        body.append(_verdict(verdict))
    if record is None:
        body.append(tag("p", "not played: no recorded conversation", attrs={"class": "muted"}))
    else:
        if record.transport_error:
            body.append(
                tag("p", f"not completed: {record.transport_error}", attrs={"class": "error"})
            )
        body += [_turn(turn, turn.index in failed) for turn in record.turns]
        body.append(tag("div", f"{record.seconds:.3g} s in all", attrs={"class": "muted"}))
    return tag(
        "section",
        body,
        attrs={
            "class": "conversation",
            "id": f"flow-{flow.id}",
            "data-verdict": state,
            "data-owner": _owner_of(verdict),
            "data-family": flow.family,
        },
    )


def _verdict(verdict: Verdict) -> Markup:
    """The verdict's facts: who owns it, what kind of failure, which turns, evidence, steps."""
    decided = verdict.decided_by + (f" ({verdict.check})" if verdict.check else "")
    facts: list[tuple[str, object]] = [
        ("verdict", verdict.verdict + (f" ({verdict.reason})" if verdict.reason else "")),
        ("score", verdict.score),
        ("owner", verdict.owner),
        ("judge's owner", verdict.judge_reported_owner),
        ("category", verdict.failure_category),
        ("failed turns", ", ".join(map(str, verdict.failed_turns)) or None),
        ("decided by", decided),
        ("judge", verdict.judge_model),
        ("evidence", tag("pre", verdict.evidence) if verdict.evidence else None),
    ]
    if verdict.reproduction and verdict.verdict != "pass":
        steps = tag("ol", [tag("li", message) for message in verdict.reproduction])
        facts.append(("reproduction", steps))
    shown = [(tag("dt", k), tag("dd", v)) for k, v in facts if v is not None]
    return tag("dl", shown, attrs={"class": "facts verdict"})


def _turn(turn: TurnRecord, failed: bool) -> Markup:
    """One turn: the user, the agent's tool calls and results, its answer, errors, timing."""
    return tag(
        "div",
        tag("div", f"turn {turn.index}" + (" · failed" if failed else ""), attrs={"class": "role"}),
        tag("div", _timing(turn), attrs={"class": "when"}),
        _message("user", tag("pre", turn.user)),
        [_call(call) for call in turn.tool_calls],
        _message("assistant", tag("pre", turn.final_text)) if turn.final_text else None,
        tag("p", f"error: {turn.error}", attrs={"class": "error"}) if turn.error else None,
        attrs={"class": "turn failed" if failed else "turn", "data-turn": turn.index},
    )


def _message(role: str, content: Markup) -> Markup:
    return tag(
        "div",
        tag("div", role, attrs={"class": "role"}),
        content,
        attrs={"class": f"message role-{role}"},
    )


def _call(call: ToolActivity) -> Markup:
    """A tool call with its arguments, then its result (and how much of it was kept)."""
    shown = len(call.result) if call.result is not None else 0
    cut = call.result_length is not None and call.result_length > shown
    note = f"result: {shown:,} of {call.result_length:,} characters kept" if cut else "result"
    parts: list[object] = [
        tag("span", call.name, attrs={"class": "call-name"}),
        tag("pre", _arguments(call.arguments)),
    ]
    if call.result is not None:
        parts += [tag("div", note, attrs={"class": "muted"}), tag("pre", call.result)]
    if call.error:
        parts.append(tag("p", f"error: {call.error}", attrs={"class": "error"}))
    return tag(
        "div",
        tag("div", "tool", attrs={"class": "role"}),
        parts,
        attrs={"class": "message role-tool call"},
    )


def _timing(turn: TurnRecord) -> str:
    parts = [
        f"{label} {quantity(value, 'ms')}"
        for label, value in (("first token", turn.ttft_ms), ("turn", turn.turn_ms))
        if value is not None
    ]
    tokens = [
        f"{value:,} {label}"
        for label, value in (("in", turn.input_tokens), ("out", turn.output_tokens))
        if value is not None
    ]
    if tokens:
        parts.append("tokens " + ", ".join(tokens))
    return " · ".join(parts) or "timing not recorded"


def _arguments(arguments: dict | str | None) -> str:
    if arguments is None:
        return "(no arguments)"
    if isinstance(arguments, str):
        return arguments
    return orjson.dumps(arguments, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
