"""Building the provider a model reference names, from the model config.

:func:`check_provider` finds every mistake that can be found without a call (an unknown
provider, a missing endpoint or key, a local model that is not installed), so a run can refuse
before it writes anything; :func:`build_provider` makes the same checks and opens the provider.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from agent_backtest.errors import UserError
from agent_backtest.providers.base import Provider
from agent_backtest.providers.config import ModelConfig, ProviderSettings
from agent_backtest.providers.refs import ModelRef
from agent_backtest.trace import LLMRequest, LLMResponse


def check_provider(
    ref: ModelRef,
    config: ModelConfig,
    base_url: str | None = None,
    api_key_env: str | None = None,
    parameter: str = "model",
) -> tuple[ProviderSettings, str | None]:
    """The provider's settings and key for ``ref``; a user error for anything that would stop
    the first call (named by ``parameter``, the setting that chose the model)."""
    settings = config.provider(ref.provider, base_url, parameter)
    if api_key_env is not None:
        settings = settings.model_copy(update={"api_key_env": api_key_env})
    if settings.type in ("openai", "anthropic") and not settings.base_url:
        raise UserError(
            f"{ref}: provider {ref.provider!r} has no base_url: set base_url in "
            f"[providers.{ref.provider}] of {config.source or 'abt.toml'}",
            parameter,
        )
    if settings.type in ("openai", "anthropic"):
        check_base_url(settings.base_url or "", "base_url" if base_url else parameter)
    if settings.type == "local":
        from agent_backtest.providers.local import model_path

        model_path(ref.model, parameter)
    if settings.type == "mock" and ref.model != "golden":
        raise UserError(
            f"{ref}: the command line knows mock/golden (answers with production's own "
            "answer); other mocks are scripted in code",
            parameter,
        )
    return settings, config.api_key(ref.provider, settings, parameter)


def check_base_url(url: str, parameter: str) -> None:
    """An endpoint must be ``http://`` or ``https://`` with a host (and a valid port): a
    malformed one is refused before the run, rather than retried as a connection error."""
    shown = url if len(url) <= 80 else url[:80] + "…"
    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(
            f"{shown!r} is not an endpoint URL: give http:// or https://, a host and the path "
            "root, e.g. http://127.0.0.1:8000/v1",
            parameter,
        )
    try:
        parts.port  # noqa: B018 - reading it checks it
    except ValueError:
        raise UserError(f"{shown!r} has no valid port (1 to 65535)", parameter) from None


def build_provider(
    ref: ModelRef,
    config: ModelConfig,
    base_url: str | None = None,
    max_connections: int = 64,
    golden: Callable[[], Iterable[tuple[LLMRequest, LLMResponse]]] = tuple,
    api_key_env: str | None = None,
    parameter: str = "model",
) -> Provider:
    """The provider for ``ref``, after :func:`check_provider`.

    ``golden`` gives the (request, production answer) pairs, read only for ``mock/golden``.
    """
    settings, key = check_provider(ref, config, base_url, api_key_env, parameter)
    if settings.type == "openai":
        from agent_backtest.providers.openai import OpenAIProvider

        return OpenAIProvider(ref.provider, settings, key, max_connections)
    if settings.type == "anthropic":
        from agent_backtest.providers.anthropic import AnthropicProvider

        return AnthropicProvider(ref.provider, settings, key, max_connections)
    if settings.type == "local":
        from agent_backtest.providers.local import LocalProvider

        return LocalProvider(ref.provider, ref.model)
    from agent_backtest.providers.mock import golden_provider

    return golden_provider(golden())
