"""Model providers and the one call path (cache, limits, retries) every model call takes.

Each public name is imported from its module on first use: a command that reads a role's
settings but calls no model (``abt score`` without a judge) starts without the client, the
cache and their libraries (asyncio, sqlite).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_backtest.exports import lazy_exports

if TYPE_CHECKING:
    from agent_backtest.providers.base import Provider
    from agent_backtest.providers.cache import CacheWarning, ResponseCache, cache_key
    from agent_backtest.providers.client import (
        CallOutcome,
        CallPolicy,
        CredentialCommand,
        ModelClient,
        RateLimits,
    )
    from agent_backtest.providers.config import (
        PROVIDER_TYPES,
        ModelConfig,
        ProviderSettings,
        default_cache_dir,
        load_model_config,
    )
    from agent_backtest.providers.counters import CallCounters
    from agent_backtest.providers.errors import ERROR_KINDS, ErrorKind, ProviderError, redact
    from agent_backtest.providers.factory import ProviderSpec, build_provider
    from agent_backtest.providers.mock import MockProvider, golden_provider, payload_key
    from agent_backtest.providers.refs import TRACE, ModelRef, parse_model_ref

# Each public name and the module that defines it.
_HOMES = {
    "CacheWarning": "agent_backtest.providers.cache",
    "CallCounters": "agent_backtest.providers.counters",
    "CallOutcome": "agent_backtest.providers.client",
    "CallPolicy": "agent_backtest.providers.client",
    "CredentialCommand": "agent_backtest.providers.client",
    "ERROR_KINDS": "agent_backtest.providers.errors",
    "ErrorKind": "agent_backtest.providers.errors",
    "MockProvider": "agent_backtest.providers.mock",
    "ModelClient": "agent_backtest.providers.client",
    "ModelConfig": "agent_backtest.providers.config",
    "ModelRef": "agent_backtest.providers.refs",
    "Provider": "agent_backtest.providers.base",
    "ProviderError": "agent_backtest.providers.errors",
    "PROVIDER_TYPES": "agent_backtest.providers.config",
    "ProviderSettings": "agent_backtest.providers.config",
    "ProviderSpec": "agent_backtest.providers.factory",
    "RateLimits": "agent_backtest.providers.client",
    "ResponseCache": "agent_backtest.providers.cache",
    "TRACE": "agent_backtest.providers.refs",
    "build_provider": "agent_backtest.providers.factory",
    "cache_key": "agent_backtest.providers.cache",
    "default_cache_dir": "agent_backtest.providers.config",
    "golden_provider": "agent_backtest.providers.mock",
    "load_model_config": "agent_backtest.providers.config",
    "parse_model_ref": "agent_backtest.providers.refs",
    "payload_key": "agent_backtest.providers.mock",
    "redact": "agent_backtest.providers.errors",
}
__all__ = [
    "ERROR_KINDS",
    "PROVIDER_TYPES",
    "TRACE",
    "CacheWarning",
    "CallCounters",
    "CallOutcome",
    "CallPolicy",
    "CredentialCommand",
    "ErrorKind",
    "MockProvider",
    "ModelClient",
    "ModelConfig",
    "ModelRef",
    "Provider",
    "ProviderError",
    "ProviderSettings",
    "ProviderSpec",
    "RateLimits",
    "ResponseCache",
    "build_provider",
    "cache_key",
    "default_cache_dir",
    "golden_provider",
    "load_model_config",
    "parse_model_ref",
    "payload_key",
    "redact",
]

__getattr__ = lazy_exports(_HOMES, globals())
