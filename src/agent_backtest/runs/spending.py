"""What a run spent, per role, from the token counts its answers reported.

A replay's candidate is priced answer by answer from results.jsonl (each answer names the model
that gave it, and ``--model trace`` asks several); the other roles (judges, and the agent, user
and teacher of simulate and bench runs) from the token totals run.json keeps per role, at the
price of the role's model. Answers from the response cache cost nothing and are left out; a
model with no price is named as unpriced and never counted as 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING

from pydantic import Field

from agent_backtest.providers.prices import PriceTable, Tokens, usd
from agent_backtest.runs.documents import DocumentPart
from agent_backtest.runs.manifest_base import ManifestBase, RunCounts
from agent_backtest.runs.records import ResultRecord, read_results
from agent_backtest.trace import Usage

if TYPE_CHECKING:
    from agent_backtest.runs.directory import RunDirectory
    from agent_backtest.runs.manifest import RunManifest


class RoleSpend(DocumentPart):
    """What one role's calls cost, from the token counts the answers reported."""

    usd: float | None = Field(
        description="USD of the calls that could be priced; None when none could."
    )
    calls: int = Field(description="Answers paid for (answers from the cache are left out).")
    input_tokens: int = Field(description="Input tokens of those answers.")
    output_tokens: int = Field(description="Output tokens of those answers.")
    unpriced: list[str] = Field(
        default_factory=list,
        description="Models of the role with no price: their calls are not in usd.",
    )
    no_usage: int = Field(
        default=0, description="Answers that reported no token counts: not in usd."
    )
    batch: bool = Field(default=False, description="Priced at the provider's batch discount.")

    def text(self) -> str:
        """``$0.0123`` or ``unpriced (local/smollm2)`` or both, with what was left out."""
        parts = [] if self.usd is None else [dollars(self.usd)]
        if self.unpriced:
            parts.append(f"unpriced ({', '.join(self.unpriced)})")
        text = " + ".join(parts) or "nothing answered"
        if self.batch:
            text += " at the batch discount"
        if self.no_usage:
            text += f" ({self.no_usage:,} answers reported no tokens)"
        return text


def dollars(amount: float) -> str:
    """USD with the cents, and more digits for amounts under a dollar."""
    return f"${amount:,.2f}" if amount >= 1 else f"${amount:.4f}"


def spent_text(spent: Mapping[str, RoleSpend]) -> str:
    """``candidate $0.0123 · judge unpriced (local/smollm2)``."""
    return " · ".join(f"{role} {spend.text()}" for role, spend in spent.items())


class SpendTally:
    """Answers of one role added as they arrive, priced model by model."""

    def __init__(self, prices: PriceTable, batch: bool = False) -> None:
        self.prices, self.batch = prices, batch
        self.usd = Decimal(0)
        self.priced_calls = 0
        self.calls = self.input_tokens = self.output_tokens = self.no_usage = 0
        self.unpriced: set[str] = set()

    def add(self, model: str, usage: Usage | None, calls: int = 1) -> Decimal:
        """One answer of ``model`` (or ``calls`` answers summed in ``usage``); what it cost."""
        self.calls += calls
        if usage is None or (usage.input_tokens is None and usage.output_tokens is None):
            self.no_usage += calls
            return Decimal(0)
        tokens = Tokens(
            input=usage.input_tokens or 0,
            output=usage.output_tokens or 0,
            cached_input=usage.cached_input_tokens or 0,
        )
        self.input_tokens += tokens.input
        self.output_tokens += tokens.output
        prices = self.prices.prices(model, self.batch)
        if prices is None:
            self.unpriced.add(model)
            return Decimal(0)
        # summed calls: the price tier of the mean call's size
        cost = prices.cost(tokens, call_input=tokens.input // max(calls, 1))
        self.usd += cost
        self.priced_calls += calls
        return cost

    def add_result(self, record: ResultRecord) -> Decimal:
        """One result record; an error or an answer from the cache cost nothing."""
        if record.response is None or record.cache_hit:
            return Decimal(0)
        return self.add(record.model, record.response.usage)

    def spend(self) -> RoleSpend:
        """The role's spend so far."""
        return RoleSpend(
            usd=usd(self.usd) if self.priced_calls else None,
            calls=self.calls,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            unpriced=sorted(self.unpriced),
            no_usage=self.no_usage,
            batch=self.batch,
        )


def results_spend(results: Iterable[ResultRecord], prices: PriceTable, batch: bool) -> RoleSpend:
    """What the answers in ``results`` cost."""
    tally = SpendTally(prices, batch)
    for record in results:
        tally.add_result(record)
    return tally.spend()


def counts_spend(model: str, counts: RunCounts, prices: PriceTable) -> RoleSpend:
    """What a role's calls cost from the totals run.json keeps of them."""
    tally = SpendTally(prices)
    answered = counts.calls - sum(counts.errors.values()) - counts.retries
    if answered <= 0:
        return tally.spend()
    tokens = Usage(input_tokens=counts.input_tokens, output_tokens=counts.output_tokens)
    tally.add(model, tokens if counts.input_tokens or counts.output_tokens else None, answered)
    return tally.spend()


def roles_spend(
    manifest: ManifestBase,
    prices: PriceTable,
    skip: Iterable[str] = (),
    models: Mapping[str, str] | None = None,
) -> dict[str, RoleSpend]:
    """Each role's spend from run.json's counts (but the roles in ``skip``), by role name, at
    the price of the role's model in ``models``, else in run.json."""
    left_out = set(skip)
    spent: dict[str, RoleSpend] = {}
    for name, counts in sorted(manifest.counts.items()):
        role = manifest.roles.get(name)
        model = (models or {}).get(name) or (role.model if role is not None else None)
        if name in left_out or model is None:
            continue
        spent[name] = counts_spend(model, counts, prices)
    return spent


def replay_spend(
    directory: RunDirectory,
    manifest: RunManifest,
    prices: PriceTable,
    judge_models: Mapping[str, str] | None = None,
) -> dict[str, RoleSpend]:
    """A replay's spend by role: the candidate from its answers in results.jsonl, the judges
    from run.json's counts (at the model of ``judge_models`` when given, the judge a scoring
    used)."""
    results = read_results(directory.results_path) if directory.results_path.exists() else []
    candidate = results_spend(results, prices, manifest.config.batch is not None)
    return {"candidate": candidate} | roles_spend(manifest, prices, ("candidate",), judge_models)


def total_usd(spent: Mapping[str, RoleSpend]) -> Decimal:
    """The priced part of every role's spend."""
    return sum((Decimal(str(s.usd)) for s in spent.values() if s.usd is not None), Decimal(0))
