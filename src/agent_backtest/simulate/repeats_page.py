"""The page's section on repeats (``--k``): pass^k and pass@k for each k, and per family."""

from __future__ import annotations

from agent_backtest.reporting.charts import RateBar, rate_chart
from agent_backtest.reporting.figures import clustered_rate as figure
from agent_backtest.reporting.markup import Markup, tag
from agent_backtest.reporting.page_parts import head_row
from agent_backtest.simulate.summary import RepeatFigures, SimulateSummary


def repeats_section(summary: SimulateSummary) -> Markup | str:
    """pass^k and pass@k overall for each k, with a chart, and each family's at the run's k;
    nothing for a run that plays each flow once."""
    repeats = summary.overall.repeats
    if repeats is None:
        return ""
    bars = [
        RateBar(f"pass^{k}", e.mean, *(e.ci95 or (None, None)), e.n)
        for k, e in repeats.pass_hat_k.items()
    ]
    explained = tag(
        "p",
        f"Each flow was played {repeats.k} times. pass^k is the chance that k conversations of "
        "a flow all pass, pass@k that one of them does, each over the flows with k decided "
        "conversations; the brackets are 95% intervals with seeds as the units.",
        attrs={"class": "muted"},
    )
    return tag(
        "section",
        tag("h2", "pass^k and pass@k"),
        explained,
        tag(
            "div",
            tag("div", _by_k(repeats), _by_family(summary, repeats.k)),
            tag("div", rate_chart(bars, "pass^k by k")),
            attrs={"class": "grid2"},
        ),
        attrs={"id": "pass-k"},
    )


def _by_k(repeats: RepeatFigures) -> Markup:
    rows = [
        tag(
            "tr",
            tag("td", k),
            tag("td", figure(hat), attrs={"class": "mono"}),
            tag("td", figure(repeats.pass_at_k[k]), attrs={"class": "mono"}),
            tag("td", hat.n, attrs={"class": "num"}),
            attrs={"data-k": k},
        )
        for k, hat in repeats.pass_hat_k.items()
    ]
    return tag(
        "table", head_row("k", "pass^k", "pass@k", "flows", numeric=1), rows, attrs={"id": "passk"}
    )


def _by_family(summary: SimulateSummary, k: int) -> Markup:
    rows = [
        tag(
            "tr",
            tag("td", name),
            tag("td", figure(rate.repeats.pass_hat_k[str(k)]), attrs={"class": "mono"}),
            tag("td", figure(rate.repeats.pass_at_k[str(k)]), attrs={"class": "mono"}),
            attrs={"data-family": name},
        )
        for name, rate in summary.families.items()
        if rate.repeats is not None
    ]
    return tag(
        "table",
        head_row("family", f"pass^{k}", f"pass@{k}"),
        rows,
        attrs={"id": "passk-families"},
    )
