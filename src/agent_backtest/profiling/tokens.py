"""Input and output tokens by model, and their cost when a price table is given.

A call that reported no count is missing, so a model's token total over partly reported calls is
``None`` (with the observed total beside it), and so is any cost computed from it.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_backtest.errors import InputError
from agent_backtest.input_files import load_json
from agent_backtest.profiling.availability import unavailable
from agent_backtest.profiling.distribution import Tally
from agent_backtest.profiling.validation import first_error
from agent_backtest.runs.profile import Cost, CostFigure, ModelTokens, Tokens
from agent_backtest.trace import Step

PER = 1_000_000
COST_DECIMALS = 6


class Price(BaseModel):
    """What one model costs, per million tokens, in the table's currency."""

    model_config = ConfigDict(extra="forbid", strict=True)

    input_per_million: float = Field(ge=0, description="Price of a million input tokens.")
    output_per_million: float = Field(ge=0, description="Price of a million output tokens.")


class PriceTable(BaseModel):
    """Prices by model name: ``{"gpt-4o": {"input_per_million": 2.5, …}}``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    prices: dict[str, Price]

    def price_of(self, *names: str | None) -> Price | None:
        """The price of the first name the table knows (the model that answered, then asked)."""
        return next((self.prices[name] for name in names if name in self.prices), None)


def load_prices(path: Path) -> PriceTable:
    """A price table file, validated strictly; an error names the file and the field."""
    data = load_json(path, "price table")
    try:
        return PriceTable.model_validate({"prices": data})
    except ValidationError as exc:
        location, message = first_error(exc, drop=1)
        raise InputError(path, location, message) from None


class ModelTally:
    """Input and output token tallies of one model, and the model name it asked for."""

    def __init__(self) -> None:
        self.input = Tally("LLM calls", integral=True)
        self.output = Tally("LLM calls", integral=True)
        self.requested: set[str] = set()


class TokenTally:
    """Token counts by model of a group."""

    def __init__(self) -> None:
        self.by_model: defaultdict[str, ModelTally] = defaultdict(ModelTally)

    def add(self, model: str, step: Step) -> None:
        """One LLM call's reported usage."""
        tokens = self.by_model[model]
        call = step.llm
        if call is not None and call.request.model:
            tokens.requested.add(call.request.model)
        usage = call.response.usage if call is not None and call.response is not None else None
        for tally, count in (
            (tokens.input, usage and usage.input_tokens),
            (tokens.output, usage and usage.output_tokens),
        ):
            if usage is None:
                tally.lack("report no token usage")
            elif count is None:
                tally.lack("report no count of these tokens")
            else:
                tally.add(count)

    def figures(self, prices: PriceTable | None) -> Tokens:
        """Tokens by model, and cost by model and in total (when a price table is given)."""
        models = sorted(self.by_model)
        tokens = {
            model: ModelTokens(
                input=self.by_model[model].input.figure(),
                output=self.by_model[model].output.figure(),
            )
            for model in models
        }
        if prices is None:
            return Tokens(by_model=tokens, cost=Cost(**unavailable("no price table (--prices)")))
        costs = {model: _cost(model, self.by_model[model], prices) for model in models}
        return Tokens(by_model=tokens, cost=_total_cost(costs))


def _cost(model: str, tokens: ModelTally, prices: PriceTable) -> CostFigure:
    """One model's cost: None when its tokens are incomplete or it has no price."""
    price = prices.price_of(model, *sorted(tokens.requested))
    if price is None:
        return CostFigure(**unavailable(f"the price table has no price for {model}"))
    observed = (
        tokens.input.observed_total * price.input_per_million
        + tokens.output.observed_total * price.output_per_million
    ) / PER
    complete = tokens.input.total is not None and tokens.output.total is not None
    reasons = [r for r in (tokens.input.figure().reason, tokens.output.figure().reason) if r]
    return CostFigure(
        total=round(observed, COST_DECIMALS) if complete else None,
        observed_total=round(observed, COST_DECIMALS),
        available=complete,
        reason="; ".join(reasons) or None,
    )


def _total_cost(costs: dict[str, CostFigure]) -> Cost:
    """The group's cost over all models: None unless every model's cost is known."""
    if not costs:
        return Cost(**unavailable("no LLM calls"))
    unpriced = sorted(model for model, cost in costs.items() if cost.observed_total is None)
    observed = sum(cost.observed_total or 0.0 for cost in costs.values())
    complete = all(cost.available for cost in costs.values())
    reason = (
        None
        if complete
        else (f"no price for {', '.join(unpriced)}" if unpriced else "token counts are missing")
    )
    return Cost(
        total=round(observed, COST_DECIMALS) if complete else None,
        observed_total=round(observed, COST_DECIMALS),
        available=complete,
        reason=reason,
        by_model=costs,
    )
