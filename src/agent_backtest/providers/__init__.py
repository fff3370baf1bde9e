"""Model providers and the one call path (cache, limits, retries) every model call takes."""

from agent_backtest.providers.base import Provider
from agent_backtest.providers.cache import CacheWarning, ResponseCache, cache_key, default_cache_dir
from agent_backtest.providers.client import (
    CallCounters,
    CallOutcome,
    CallPolicy,
    CredentialCommand,
    ModelClient,
    RateLimits,
)
from agent_backtest.providers.config import ModelConfig, ProviderSettings, load_model_config
from agent_backtest.providers.errors import ERROR_KINDS, ErrorKind, ProviderError, redact
from agent_backtest.providers.factory import build_provider
from agent_backtest.providers.mock import MockProvider, golden_provider, payload_key
from agent_backtest.providers.refs import TRACE, ModelRef, parse_model_ref

__all__ = [
    "ERROR_KINDS",
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
