"""Building the provider a model reference names, from the model config."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agent_backtest.errors import UserError
from agent_backtest.providers.anthropic import AnthropicProvider
from agent_backtest.providers.base import Provider
from agent_backtest.providers.config import ModelConfig
from agent_backtest.providers.local import LocalProvider
from agent_backtest.providers.mock import golden_provider
from agent_backtest.providers.openai import OpenAIProvider
from agent_backtest.providers.refs import ModelRef
from agent_backtest.trace import LLMRequest, LLMResponse


def build_provider(
    ref: ModelRef,
    config: ModelConfig,
    base_url: str | None = None,
    max_connections: int = 64,
    golden: Callable[[], Iterable[tuple[LLMRequest, LLMResponse]]] = tuple,
) -> Provider:
    """The provider for ``ref``; a missing key or unknown provider fails before any call.

    ``golden`` gives the (request, production answer) pairs, read only for ``mock/golden``.
    """
    settings = config.provider(ref.provider, base_url)
    if settings.type == "openai":
        return OpenAIProvider(
            ref.provider, settings, config.api_key(ref.provider, settings), max_connections
        )
    if settings.type == "anthropic":
        return AnthropicProvider(
            ref.provider, settings, config.api_key(ref.provider, settings), max_connections
        )
    if settings.type == "local":
        return LocalProvider(ref.provider, ref.model)
    if ref.model == "golden":
        return golden_provider(golden())
    raise UserError(
        f"{ref}: the command line knows mock/golden (answers with "
        "production's own answer); other mocks are scripted in code",
        "model",
    )
