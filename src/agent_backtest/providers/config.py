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

    [roles.judge]                        # settings of one model role
    model = "openai/gpt-4.1"
    concurrency = 16
    timeout = 30

    [aliases]                            # recorded model name → provider/model, for --model trace
    "gpt-4o" = "openai/gpt-4o-2024-08-06"

    [prices."openai/gpt-4.1-mini"]       # USD per million tokens, over genai-prices' table
    input = 0.4
    output = 1.6
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
)
from pydantic_core import PydanticCustomError

from agent_backtest.errors import InputError, UserError
from agent_backtest.input_files import load_toml
from agent_backtest.providers.prices import PriceSetting
from agent_backtest.providers.refs import TRACE, ModelRef, parse_model_ref
from agent_backtest.record_model import StrictModel
from agent_backtest.registry import Registry

RoleName = Literal["candidate", "judge", "fallback_judge", "agent", "user", "teacher"]
# The parameter (keyword argument, and through cli/errors.py the flag) that names each role's
# model, so an error about a role points at what the user wrote.
ROLE_PARAMETER: dict[str, str] = {
    "candidate": "model",
    "judge": "judge",
    "fallback_judge": "fallback_judge",
    "agent": "agent",
    "user": "user",
    "teacher": "teacher",
}
# The roles whose requests take their sampling from the role's settings; the others keep their
# own (the candidate each step's recorded parameters, judges temperature 0, the teacher 0.7).
SAMPLED_ROLES: tuple[str, ...] = ("agent", "user")
SAMPLING_FIELDS: tuple[str, ...] = ("temperature", "top_p", "max_tokens")
# What run.json records of a role only when it is set (unset: nothing sent, or the provider's).
RECORDED_WHEN_SET: tuple[str, ...] = (*SAMPLING_FIELDS, "max_answer_bytes")
PROVIDER_GROUP = "agent_backtest.providers"
# Each provider type (the wire protocol of [providers.NAME] type = …) and the class that speaks
# it; see providers/factory.py for what such a class provides.
PROVIDER_TYPES = Registry(
    PROVIDER_GROUP,
    "provider type",
    {
        "openai": "agent_backtest.providers.openai:OpenAIProvider",
        "anthropic": "agent_backtest.providers.anthropic:AnthropicProvider",
        "local": "agent_backtest.providers.local:LocalProvider",
        "mock": "agent_backtest.providers.mock:MockProvider",
    },
    f"install a package that adds one (entry point group {PROVIDER_GROUP})",
    contract=("open",),
)

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


class ProviderSettings(StrictModel):
    """How to reach one provider."""

    type: str = Field(
        description="The wire protocol: openai, anthropic, local, mock, or a type an installed "
        "package adds."
    )
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
    max_answer_bytes: int = Field(
        default=32 * 1024 * 1024,
        ge=1024,
        le=1024**3,
        description="The most bytes (decoded) one answer may have; a larger one is the error "
        "answer_too_large, never held whole.",
    )

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        """A type no built-in and no installed package provides is refused when the file is
        read, whether or not a run uses that provider."""
        if value not in PROVIDER_TYPES:
            raise PydanticCustomError(
                "provider_type",
                "Input should be a provider type: {known}; a package adds others through the "
                "entry point group {group}",
                {"known": ", ".join(PROVIDER_TYPES.names()), "group": PROVIDER_GROUP},
            )
        return value


class RoleSettings(StrictModel):
    """The settings a role's calls take; every field optional, for ``[roles.NAME]``."""

    model: str | None = Field(
        default=None, description="provider/model (or trace, for the candidate)."
    )
    base_url: str | None = Field(default=None, description="Endpoint, overriding the provider's.")
    api_key_env: str | None = Field(
        default=None,
        description="Environment variable holding the key, overriding the provider's; "
        "empty for none.",
    )
    timeout: float | None = Field(default=None, gt=0, description="Seconds per attempt.")
    max_retries: int | None = Field(default=None, ge=0)
    backoff_initial: float | None = Field(default=None, ge=0)
    concurrency: int | None = Field(default=None, ge=1, description="Calls in flight at once.")
    rpm: float | None = Field(default=None, gt=0, description="Requests per minute at most.")
    tpm: float | None = Field(default=None, gt=0, description="Prompt tokens per minute at most.")
    cache: bool | None = Field(default=None, description="Read and fill the response cache.")
    cache_dir: str | None = Field(default=None, description="Where the response cache lives.")
    temperature: float | None = Field(
        default=None, ge=0, le=2, description="Sampling temperature (agent and user roles)."
    )
    top_p: float | None = Field(
        default=None, gt=0, le=1, description="Nucleus sampling mass (agent and user roles)."
    )
    max_tokens: int | None = Field(
        default=None, ge=1, description="Most tokens per answer (agent and user roles)."
    )
    max_answer_bytes: int | None = Field(
        default=None,
        ge=1024,
        le=1024**3,
        description="The most bytes (decoded) one answer may have, overriding the provider's.",
    )


class ModelRole(BaseModel):
    """One model's part in a run, with every setting resolved; recorded in run.json."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: RoleName
    model: str = Field(description="provider/model, or trace for the model that served each step.")
    base_url: str | None = None
    api_key_env: str | None = None
    timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    backoff_initial: float = Field(default=1.0, ge=0)
    concurrency: int = Field(default=8, ge=1)
    rpm: float | None = None
    tpm: float | None = None
    cache_dir: str | None = Field(default=None, description="The response cache; None: no cache.")
    temperature: float | None = Field(
        default=None, ge=0, le=2, description="Sampling temperature sent; None: the provider's."
    )
    top_p: float | None = Field(
        default=None, gt=0, le=1, description="Nucleus sampling mass sent; None: the provider's."
    )
    max_tokens: int | None = Field(
        default=None, ge=1, description="Most tokens per answer sent; None: the provider's."
    )
    max_answer_bytes: int | None = Field(
        default=None,
        ge=1024,
        le=1024**3,
        description="The most bytes (decoded) one answer may have, a larger one the error "
        "answer_too_large; None: the provider's max_answer_bytes (32 MiB unless set).",
    )

    @field_validator(*SAMPLING_FIELDS)
    @classmethod
    def _sampled_only_where_used(cls, value: Any, info: ValidationInfo) -> Any:
        """Sampling settings on a role whose calls keep their own would be recorded but never
        sent: refused."""
        role = info.data.get("name")
        if value is not None and role not in SAMPLED_ROLES:
            raise PydanticCustomError(
                "sampled_role",
                "set for the agent and user roles only; the {role} role's calls keep their own "
                "sampling",
                {"role": role},
            )
        return value

    @model_serializer(mode="wrap")
    def _unset_sampling_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A sampling setting left unset is not recorded: the role's calls send none (judges
        and the candidate, whose calls keep their own, record no sampling at all). Nor is an
        unset answer cap: the provider's applies."""
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if k not in RECORDED_WHEN_SET or v is not None}

    @property
    def sampling(self) -> dict[str, Any]:
        """The sampling parameters every request of this role carries (those set)."""
        return {
            name: getattr(self, name) for name in SAMPLING_FIELDS if getattr(self, name) is not None
        }

    @property
    def parameter(self) -> str:
        """The parameter a user sets this role's model with."""
        return ROLE_PARAMETER[self.name]

    @property
    def is_trace(self) -> bool:
        """True when each unit goes to the model that served it in production."""
        return self.model == TRACE

    @property
    def ref(self) -> ModelRef:
        """The role's model as a reference (not for ``trace``, which names many)."""
        return parse_model_ref(self.model, self.parameter)

    def with_settings(self, **changes: Any) -> ModelRole:
        """This role with some settings changed (and validated)."""
        try:
            return ModelRole.model_validate({**self.model_dump(), **changes})
        except ValidationError as exc:
            error = exc.errors()[0]
            raise UserError(error["msg"], str(error["loc"][0])) from None


class ModelConfig(StrictModel):
    """The whole config file."""

    providers: dict[str, ProviderSettings] = Field(default_factory=dict)
    roles: dict[RoleName, RoleSettings] = Field(
        default_factory=dict, description="Settings of each model role ([roles.judge], …)."
    )
    aliases: dict[str, str] = Field(
        default_factory=dict, description="Recorded model names mapped to provider/model."
    )
    prices: dict[str, PriceSetting] = Field(
        default_factory=dict,
        description="Prices by provider/model (or model), over the genai-prices table.",
    )
    source: str | None = Field(default=None, exclude=True)

    def provider(
        self, name: str, base_url: str | None = None, parameter: str = "model"
    ) -> ProviderSettings:
        """Settings of a named provider: the file's, else the built-in default, else those of
        an installed provider type of that name (``echo/x`` with a package adding ``echo``)."""
        settings = self.providers.get(name)
        if settings is None:
            if name in BUILT_IN:
                settings = ProviderSettings.model_validate(BUILT_IN[name])
            elif name in PROVIDER_TYPES:
                settings = ProviderSettings(type=name)
            else:
                known = ", ".join(sorted({*BUILT_IN, *self.providers}))
                installed = ", ".join(PROVIDER_TYPES.installed_names()) or "none"
                where = self.source or "abt.toml"
                raise UserError(
                    f"unknown provider {name!r} (known: {known}; installed provider types: "
                    f"{installed}); add [providers.{name}] with type and base_url to {where}, "
                    f"or install a package that adds it (entry point group {PROVIDER_GROUP})",
                    parameter,
                )
        if base_url:
            settings = settings.model_copy(update={"base_url": base_url})
        return settings

    def api_key(
        self, name: str, settings: ProviderSettings, parameter: str = "model"
    ) -> str | None:
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
                parameter,
            )
        return key


def default_cache_dir() -> Path:
    """The user cache dir of the tool (the response cache, downloaded benchmark data)."""
    return Path(platformdirs.user_cache_dir("agent-backtest"))


def user_config_path() -> Path:
    """Where the user's own abt.toml lives (whether or not it exists)."""
    return Path(platformdirs.user_config_dir("agent-backtest")) / "abt.toml"


def config_path(explicit: Path | None) -> Path | None:
    """The config file in effect, or None for the built-in defaults."""
    if explicit is not None:
        return explicit
    for candidate in (Path("abt.toml"), user_config_path()):
        if candidate.is_file():
            return candidate
    return None


def load_model_config(explicit: Path | None = None) -> ModelConfig:
    """Read the config file in effect; errors name the file and the key."""
    path = config_path(explicit)
    if path is None:
        return ModelConfig()
    data = load_toml(path, "config")
    try:
        config = ModelConfig.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(path, ".".join(str(p) for p in error["loc"]), error["msg"]) from None
    config.source = str(path)
    return config
