"""Building the provider a model reference names, from the model config.

:func:`check_provider` finds every mistake that can be found without a call (an unknown
provider, a missing endpoint or key, a local model that is not installed), so a run can refuse
before it writes anything; :func:`build_provider` makes the same checks and opens the provider.

The ``type`` of a provider's settings names a class in
:data:`~agent_backtest.providers.config.PROVIDER_TYPES` (a built-in, or one an installed package
adds under the entry point group ``agent_backtest.providers``). What such a class provides:

* ``open(spec: ProviderSpec) -> Provider`` (a class method): the provider of one model
  reference, ready to call (see :class:`~agent_backtest.providers.base.Provider`);
* ``check(spec: ProviderSpec) -> None`` (optional): raises :class:`UserError` for a mistake
  found without a call; the key is not looked up yet, so ``spec.api_key`` is None;
* ``needs_base_url = True`` (optional): the settings must name an ``http(s)://`` endpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from agent_backtest.errors import UserError
from agent_backtest.providers.base import Provider
from agent_backtest.providers.config import PROVIDER_TYPES, ModelConfig, ProviderSettings
from agent_backtest.providers.refs import ModelRef
from agent_backtest.trace import LLMRequest, LLMResponse


@dataclass(frozen=True)
class ProviderSpec:
    """What a provider type's class checks and opens a provider with, for one model."""

    ref: ModelRef
    """The model reference: ``ref.provider`` names the provider, ``ref.model`` the model."""
    settings: ProviderSettings
    """The provider's settings as resolved (file, built-in default, role overrides)."""
    api_key: str | None = None
    """The key from the settings' ``api_key_env``; None when there is none (or in ``check``)."""
    max_connections: int = 64
    """Connections the provider may keep open (the role's concurrency)."""
    golden: Callable[[], Iterable[tuple[LLMRequest, LLMResponse]]] = tuple
    """The (request, production answer) pairs of the run, for providers that answer with them."""
    parameter: str = "model"
    """The setting that chose the model: what a :class:`UserError` about it names."""


def check_provider(
    ref: ModelRef,
    config: ModelConfig,
    base_url: str | None = None,
    api_key_env: str | None = None,
    parameter: str = "model",
    max_answer_bytes: int | None = None,
) -> tuple[ProviderSettings, str | None]:
    """The provider's settings and key for ``ref`` (with a role's ``api_key_env`` and
    ``max_answer_bytes`` over the config's); a user error for anything that would stop the first
    call (named by ``parameter``, the setting that chose the model)."""
    settings = config.provider(ref.provider, base_url, parameter)
    overrides = {"api_key_env": api_key_env, "max_answer_bytes": max_answer_bytes}
    given = {key: value for key, value in overrides.items() if value is not None}
    if given:
        settings = settings.model_copy(update=given)
    provider_type = PROVIDER_TYPES.load(settings.type, parameter)
    if getattr(provider_type, "needs_base_url", False):
        if not settings.base_url:
            raise UserError(
                f"{ref}: provider {ref.provider!r} has no base_url: set base_url in "
                f"[providers.{ref.provider}] of {config.source or 'abt.toml'}",
                parameter,
            )
        check_base_url(settings.base_url, "base_url" if base_url else parameter)
    check = getattr(provider_type, "check", None)
    if check is not None:
        check(ProviderSpec(ref, settings, parameter=parameter))
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
    max_answer_bytes: int | None = None,
) -> Provider:
    """The provider for ``ref``, after :func:`check_provider`, opened by its type's class.

    ``golden`` gives the (request, production answer) pairs, read only for ``mock/golden``.
    """
    settings, key = check_provider(ref, config, base_url, api_key_env, parameter, max_answer_bytes)
    spec = ProviderSpec(ref, settings, key, max_connections, golden, parameter)
    return PROVIDER_TYPES.load(settings.type, parameter).open(spec)
