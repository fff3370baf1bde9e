"""The page's section on repeats (``--k``): pass^k and pass@k for each k, and per family."""

from __future__ import annotations

from agent_backtest.reporting.figures import clustered_rate as figure
from agent_backtest.reporting.markup import Markup, tag
from agent_backtest.reporting.page_parts import head_row, passk_chart, passk_table
from agent_backtest.simulate.summary import SimulateSummary


def repeats_section(summary: SimulateSummary) -> Markup | str:
    """pass^k and pass@k overall for each k, with a chart, and each family's at the run's k;
    nothing for a run that plays each flow once."""
    repeats = summary.overall.repeats
    if repeats is None:
        return ""
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
            tag(
                "div",
                passk_table(repeats.pass_hat_k, repeats.pass_at_k, "flows"),
                _by_family(summary, repeats.k),
            ),
            tag("div", passk_chart(repeats.pass_hat_k)),
            attrs={"class": "grid2"},
        ),
        attrs={"id": "pass-k"},
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
