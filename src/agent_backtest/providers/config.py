"""The model config (``abt.toml``): endpoints, key variables, headers and model aliases.

Looked for in ``--config FILE``, else ``./abt.toml``, else ``abt.toml`` in the user config dir.
Keys themselves never go in the file: it names the environment variable that holds each one.

    [providers.openai]
    api_key_env = "OPENAI_API_KEY"

    [providers.vllm]                     # any OpenAI-compatible server
    type = "openai"
    base_url = "http://127.0.0.1:8000/v1"
    api_key_env = ""                     # none needed
    drop_schema_keys = ["additionalProperties"]

    [aliases]                            # recorded model name → provider/model, for --model trace
    "gpt-4o" = "openai/gpt-4o-2024-08-06"
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_backtest.errors import InputError, UserError

ProviderType = Literal["openai", "anthropic", "local", "mock"]

BUILT_IN: dict[str, dict[str, str]] = {
    "openai": {
        "type": "openai",
        "base_url": "https://api.openai.com/v1",
        "api_key_env": "OPENAI_API_KEY",
    },
    "anthropic": {
        "type": "anthropic",
        "base_url": "https://api.anthropic.com",
        "api_key_env": "ANTHROPIC_API_KEY",
    },
    "local": {"type": "local"},
    "mock": {"type": "mock"},
}


class ProviderSettings(BaseModel):
    """How to reach one provider."""

    model_config = ConfigDict(extra="forbid")

    type: ProviderType = Field(description="The wire protocol: openai, anthropic, local or mock.")
    base_url: str | None = Field(default=None, description="Endpoint root, e.g. .../v1.")
    api_key_env: str | None = Field(
        default=None, description="Environment variable holding the key; empty for none."
    )
    headers: dict[str, str] = Field(default_factory=dict, description="Extra request headers.")
    drop_schema_keys: list[str] = Field(
        default_factory=list,
        description="JSON Schema keys removed from tool parameters (for gateways that reject "
        "them); every removal is recorded.",
    )
    drop_params: list[str] = Field(
        default_factory=list, description="Request parameters the target does not accept."
    )


class ModelConfig(BaseModel):
    """The whole config file."""

    model_config = ConfigDict(extra="forbid")

    providers: dict[str, ProviderSettings] = Field(default_factory=dict)
    aliases: dict[str, str] = Field(
        default_factory=dict, description="Recorded model names mapped to provider/model."
    )
    source: str | None = Field(default=None, exclude=True)

    def provider(self, name: str, base_url: str | None = None) -> ProviderSettings:
        """Settings of a named provider: the file's, else the built-in default."""
        settings = self.providers.get(name)
        if settings is None:
            if name not in BUILT_IN:
                known = ", ".join(sorted({*BUILT_IN, *self.providers}))
                where = self.source or "abt.toml"
                raise UserError(
                    f"unknown provider {name!r} (known: {known}); "
                    f"add [providers.{name}] with type and base_url to {where}",
                    "model",
                )
            settings = ProviderSettings.model_validate(BUILT_IN[name])
        if base_url:
            settings = settings.model_copy(update={"base_url": base_url})
        return settings

    def api_key(self, name: str, settings: ProviderSettings) -> str | None:
        """The provider's key from its environment variable; a missing one is a user error."""
        variable = settings.api_key_env
        if not variable:
            return None
        key = os.environ.get(variable)
        if not key:
            raise UserError(
                f"no key for {name}: set {variable}, or name "
                f"another variable as api_key_env in [providers.{name}] of "
                f"{self.source or 'abt.toml'} (empty for a server without keys)",
                "model",
            )
        return key


def config_path(explicit: Path | None) -> Path | None:
    """The config file in effect, or None for the built-in defaults."""
    if explicit is not None:
        return explicit
    for candidate in (
        Path("abt.toml"),
        Path(platformdirs.user_config_dir("agent-backtest")) / "abt.toml",
    ):
        if candidate.is_file():
            return candidate
    return None


def load_model_config(explicit: Path | None = None) -> ModelConfig:
    """Read the config file in effect; errors name the file and the key."""
    path = config_path(explicit)
    if path is None:
        return ModelConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(path, None, f"cannot read the config: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, None, f"not valid TOML: {exc}") from None
    try:
        config = ModelConfig.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(path, ".".join(str(p) for p in error["loc"]), error["msg"]) from None
    config.source = str(path)
    return config
