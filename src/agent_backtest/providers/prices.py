"""What a model's calls cost: per-token prices from ``[prices]`` in abt.toml, else genai-prices.

A price is in US dollars per million tokens: input, output, and input tokens read from the
provider's prompt cache. ``[prices."provider/model"]`` (or ``[prices.model]``) in abt.toml wins
over the maintained table of the ``genai-prices`` package, which is asked by the model name and
the provider's name in abt.toml (``openai``, ``anthropic``, ``groq``…). A model neither knows is
*unpriced*: its cost is None, never 0, and every figure built from it says so.

    [prices."vllm/llama-3.1-8b"]      # a self-hosted model, at what its hardware costs
    input = 0.05
    output = 0.10
    cached_input = 0.01                # default: the input price
    batch_discount = 0.5               # the share taken off in a provider batch (default 0.5)
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pydantic import Field

from agent_backtest.providers.refs import ModelRef
from agent_backtest.record_model import StrictModel

MILLION = Decimal(1_000_000)
# Providers whose models run in this process or answer from a script: no list price exists,
# so the maintained table is not asked (it could match a hosted model of the same name).
UNLISTED_PROVIDERS = frozenset({"local", "mock"})


class PriceSetting(StrictModel):
    """One model's prices in abt.toml's ``[prices]`` table, in USD per million tokens."""

    input: float = Field(ge=0, description="USD per million input (prompt) tokens.")
    output: float = Field(ge=0, description="USD per million output (completion) tokens.")
    cached_input: float | None = Field(
        default=None,
        ge=0,
        description="USD per million input tokens read from the prompt cache (default: input).",
    )
    batch_discount: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Share of the price taken off for calls sent in a provider batch.",
    )


@dataclass(frozen=True)
class Tokens:
    """The token counts of one call (or of several calls of the same size class)."""

    input: int = 0
    """Every input token, those read from the prompt cache included."""
    output: int = 0
    cached_input: int = 0
    """Input tokens read from the prompt cache (a part of ``input``)."""


@dataclass(frozen=True)
class _Rate:
    """One price in USD per million tokens, with the higher prices that apply to every token
    of a call whose input passes a threshold (``tiers``: (threshold, price), ascending)."""

    base: Decimal
    tiers: tuple[tuple[int, Decimal], ...] = ()

    def per_million(self, call_input: int) -> Decimal:
        """The price for a call with ``call_input`` input tokens."""
        for start, price in reversed(self.tiers):
            if call_input > start:
                return price
        return self.base


@dataclass(frozen=True)
class ModelPrices:
    """The prices of one model, in USD per million tokens, and where they came from."""

    input: _Rate
    output: _Rate
    cached_input: _Rate
    source: str
    """``abt.toml`` or ``genai-prices``."""

    def cost(self, tokens: Tokens, call_input: int | None = None) -> Decimal:
        """What a call with these token counts costs, in USD; for the counts of several calls,
        ``call_input`` is one call's input, which decides the price tier."""
        uncached = max(tokens.input - tokens.cached_input, 0)
        size = tokens.input if call_input is None else call_input
        return (
            uncached * self.input.per_million(size)
            + tokens.cached_input * self.cached_input.per_million(size)
            + tokens.output * self.output.per_million(size)
        ) / MILLION


class PriceTable:
    """Prices of models by ``provider/model``: the config's ``[prices]`` first, then the
    maintained table; each model is looked up once."""

    def __init__(self, settings: dict[str, PriceSetting] | None = None) -> None:
        self.settings = dict(settings or {})
        self._found: dict[tuple[str, bool], ModelPrices | None] = {}

    def prices(self, ref: ModelRef | str, batch: bool = False) -> ModelPrices | None:
        """The prices of ``ref`` (at the batch discount with ``batch``); None if unpriced."""
        key = (str(ref), batch)
        if key not in self._found:
            self._found[key] = self._look_up(_as_ref(ref), batch)
        return self._found[key]

    def cost(self, ref: ModelRef | str, tokens: Tokens, batch: bool = False) -> Decimal | None:
        """What one call of ``ref`` with ``tokens`` costs in USD; None if ``ref`` is unpriced."""
        prices = self.prices(ref, batch)
        return prices.cost(tokens) if prices is not None else None

    def _look_up(self, ref: ModelRef, batch: bool) -> ModelPrices | None:
        setting = self.settings.get(str(ref)) or self.settings.get(ref.model)
        if setting is not None:
            return _from_setting(setting, batch)
        if ref.provider in UNLISTED_PROVIDERS:
            return None
        return _from_genai_prices(ref, batch)


def _as_ref(ref: ModelRef | str) -> ModelRef:
    if isinstance(ref, ModelRef):
        return ref
    provider, _, model = ref.partition("/")
    return ModelRef(provider, model)


def _from_setting(setting: PriceSetting, batch: bool) -> ModelPrices:
    share = Decimal(str(1 - setting.batch_discount)) if batch else Decimal(1)
    cached = setting.input if setting.cached_input is None else setting.cached_input
    return ModelPrices(
        input=_Rate(Decimal(str(setting.input)) * share),
        output=_Rate(Decimal(str(setting.output)) * share),
        cached_input=_Rate(Decimal(str(cached)) * share),
        source="abt.toml",
    )


def _from_genai_prices(ref: ModelRef, batch: bool) -> ModelPrices | None:
    """The maintained table's prices of ``ref`` today; None when it has no such model."""
    # Imported here: the table is large, and only a run that prices something needs it.
    from genai_prices import Usage, calc_price

    context: Any = {"processing": "batch"} if batch else None
    try:
        found = calc_price(
            Usage(input_tokens=1, output_tokens=1),
            ref.model,
            provider_id=ref.provider,
            price_context=context,
        )
    except LookupError:
        return None
    price = found.model_price
    input_rate = _rate(getattr(price, "input_mtok", None))
    if input_rate is None:
        return None
    output_rate = _rate(getattr(price, "output_mtok", None)) or _Rate(Decimal(0))
    cached_rate = _rate(getattr(price, "cache_read_mtok", None)) or input_rate
    return ModelPrices(input_rate, output_rate, cached_rate, source="genai-prices")


def _rate(price: Any) -> _Rate | None:
    """A genai-prices price (a Decimal, or tiered prices with a base) as a rate."""
    if price is None:
        return None
    if isinstance(price, Decimal):
        return _Rate(price)
    tiers = tuple((int(tier.start), Decimal(tier.price)) for tier in price.tiers)
    return _Rate(Decimal(price.base), tiers)


def usd(amount: Decimal | None) -> float | None:
    """A cost as stored in a run's files: USD as a float to a millionth of a dollar."""
    return None if amount is None else round(float(amount), 6)
