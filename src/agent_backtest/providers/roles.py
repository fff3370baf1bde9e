"""Model roles: which model plays which part in a run, and the settings of its calls.

A role is one typed settings object (model, endpoint, key variable, timeout, retries,
concurrency, rate limits, cache) whatever the job: the candidate under test, the judge and its
fallback, and for the coming jobs the agent, the simulated user and the teacher. A role's
settings come from its defaults, then ``[roles.NAME]`` in ``abt.toml``, then what the caller set
(flags or keyword arguments), each overriding the one before. The result is recorded in
``run.json``.

The client and the response cache (and asyncio and sqlite with them) are imported
where clients are opened: resolving and checking a role needs neither, so a command that only
reads roles (``abt score`` without a judge) starts without them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agent_backtest.errors import UserError
from agent_backtest.providers.config import (
    ROLE_PARAMETER,
    ModelConfig,
    ModelRole,
    RoleName,
    RoleSettings,
    default_cache_dir,
)
from agent_backtest.providers.counters import CallCounters
from agent_backtest.providers.factory import build_provider, check_provider
from agent_backtest.providers.families import JudgeError, check_judge
from agent_backtest.providers.refs import TRACE, ModelRef, parse_model_ref
from agent_backtest.trace import LLMRequest, LLMResponse

if TYPE_CHECKING:
    from agent_backtest.providers.client import CallPolicy, CredentialCommand, ModelClient

# Judges grade many short items at once; the candidate's default is gentler on a rate limit.
DEFAULT_CONCURRENCY: dict[str, int] = {"judge": 16, "fallback_judge": 16}


# A role's model as a caller gives it: a model reference, some settings with a model, or a role
# already resolved (as run.json records it).
RoleModel = str | RoleSettings | ModelRole


def resolve_role(
    name: RoleName, config: ModelConfig, model: RoleModel | None = None, **settings: Any
) -> ModelRole:
    """The role ``name`` with defaults, then ``[roles.NAME]`` of the config, then ``model``'s
    settings when it is a :class:`RoleSettings`, then ``settings`` (those not None) applied;
    the model falls back to the config's. A :class:`ModelRole` is already resolved: only
    ``settings`` are applied to it."""
    if isinstance(model, ModelRole):
        return _given_role(name, model, settings)
    given = model if isinstance(model, RoleSettings) else RoleSettings(model=model)
    from_file = config.roles.get(name, RoleSettings())
    merged: dict[str, Any] = {
        "concurrency": DEFAULT_CONCURRENCY.get(name, 8),
        "cache": True,
        **from_file.model_dump(exclude_none=True),
        **given.model_dump(exclude_none=True, exclude={"model"}),
        **{key: value for key, value in settings.items() if value is not None},
    }
    chosen = given.model or merged.pop("model", None)
    merged.pop("model", None)
    parameter = ROLE_PARAMETER[name]
    if not chosen:
        raise UserError(
            f"no model for the {name} role: name one, or set model in "
            f"[roles.{name}] of {config.source or 'abt.toml'}",
            parameter,
        )
    if chosen != TRACE or name != "candidate":
        parse_model_ref(chosen, parameter)
    use_cache = merged.pop("cache")
    cache_dir = merged.pop("cache_dir", None)
    merged["cache_dir"] = str(cache_dir or default_cache_dir()) if use_cache else None
    try:
        return ModelRole(name=name, model=chosen, **merged)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise UserError(f"{error['loc'][0]}: {error['msg']}", parameter) from None


def _given_role(name: RoleName, role: ModelRole, settings: dict[str, Any]) -> ModelRole:
    """A resolved role given for ``name``, with the caller's ``settings`` (not None) applied."""
    if role.name != name:
        raise UserError(
            f"a {role.name} role was given for the {name} role: give ModelRole(name={name!r}, …)",
            ROLE_PARAMETER[name],
        )
    changes = {key: value for key, value in settings.items() if value is not None}
    use_cache = changes.pop("cache", None)
    if use_cache is False:
        changes["cache_dir"] = None
    elif "cache_dir" in changes:
        changes["cache_dir"] = str(changes["cache_dir"])
    return role.with_settings(**changes) if changes else role


def call_policy(role: ModelRole) -> CallPolicy:
    """Timeouts and retries of the role's calls."""
    from agent_backtest.providers.client import CallPolicy

    return CallPolicy(
        timeout=role.timeout, max_retries=role.max_retries, backoff_initial=role.backoff_initial
    )


def check_role(role: ModelRole, refs: Iterable[ModelRef], config: ModelConfig) -> None:
    """Everything that can be known about reaching the role's models without calling them:
    the provider exists and is complete, its key is set, a local model is installed, its
    response cache opens."""
    check_cache(role)
    for ref in refs:
        check_provider(ref, config, role.base_url, role.api_key_env, role.parameter)


def check_cache(role: ModelRole) -> None:
    """The role's response cache opens (not a file in the way, a folder that cannot be made or
    a damaged database), found before a run directory is made or a call paid for."""
    if role.cache_dir:
        from agent_backtest.providers.cache import ResponseCache

        ResponseCache(Path(role.cache_dir)).close()


def check_judges(
    judges: Sequence[ModelRole], candidates: Sequence[str], config: ModelConfig
) -> list[str]:
    """The judges can be reached and are none of the candidates; warnings for a judge of a
    candidate's family."""
    warnings: list[str] = []
    for judge in judges:
        try:
            warnings += check_judge(judge.model, candidates)
        except JudgeError as exc:
            raise UserError(str(exc), judge.parameter) from None
        check_role(judge, [judge.ref], config)
    return warnings


def open_clients(
    role: ModelRole,
    refs: Iterable[ModelRef],
    config: ModelConfig,
    counters: CallCounters,
    credentials: CredentialCommand | None = None,
    golden: Callable[[], Iterable[tuple[LLMRequest, LLMResponse]]] = tuple,
) -> dict[ModelRef, ModelClient]:
    """One client per model the role calls, sharing the role's policy, limits and counters.

    The caller closes them with :func:`close_clients`.
    """
    from agent_backtest.providers.cache import ResponseCache
    from agent_backtest.providers.client import ModelClient, RateLimits

    limits = RateLimits(role.rpm, role.tpm)
    clients = {}
    for ref in sorted(set(refs)):
        provider = build_provider(
            ref, config, role.base_url, role.concurrency, golden, role.api_key_env, role.parameter,
            role.max_answer_bytes,
        )  # fmt: skip
        cache = ResponseCache(Path(role.cache_dir)) if role.cache_dir else None
        clients[ref] = ModelClient(
            provider, call_policy(role), cache, limits, credentials, counters
        )
    return clients


async def close_clients(clients: Mapping[Any, ModelClient] | Iterable[ModelClient]) -> None:
    """Close every client's connections and cache."""
    for client in clients.values() if isinstance(clients, Mapping) else clients:
        await client.provider.aclose()
        if client.cache is not None:
            client.cache.close()
