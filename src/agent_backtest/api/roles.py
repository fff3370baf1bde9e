"""The models a job's roles are played by, given the same way to every function: ``roles``.

``roles`` maps a role's name to its model: a model reference (``{"judge": "openai/gpt-4.1"}``),
a :class:`RoleSettings` (a model and any of its call settings, as ``[roles.NAME]`` of abt.toml
holds them; the config's settings fill the rest), or a resolved :class:`ModelRole` (as a run's
run.json records it, used as it is). A function takes only the roles it has, and says which
when given another; a role not given comes from ``[roles.NAME]`` of the config where the job
allows it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from agent_backtest.errors import UserError
from agent_backtest.providers.config import (
    SAMPLING_FIELDS,
    ModelConfig,
    ModelRole,
    RoleName,
    RoleSettings,
)
from agent_backtest.providers.roles import RoleModel, resolve_role

__all__ = [
    "JUDGES",
    "SAMPLING_FIELDS",
    "ModelRole",
    "RoleModel",
    "RoleSettings",
    "Roles",
    "given_roles",
    "judges",
]

Roles = Mapping[str, RoleModel]
"""A role's name → its model: ``provider/model``, a RoleSettings, or a ModelRole."""

JUDGES: tuple[RoleName, ...] = ("judge", "fallback_judge")


def given_roles(roles: Roles | None, accepted: Collection[RoleName]) -> dict[RoleName, RoleModel]:
    """The roles a caller gave, each checked to be one that ``accepted`` names and to be a model
    reference or a typed role."""
    given: dict[RoleName, RoleModel] = {}
    for name, model in (roles or {}).items():
        if name not in accepted:
            raise UserError(
                f"has no {name!r} role here: give {_listed(accepted)}",
                "roles",
            )
        if not isinstance(model, str | RoleSettings | ModelRole):
            raise UserError(
                f"{name}: give provider/model, a RoleSettings or a ModelRole, "
                f"not {type(model).__name__}",
                "roles",
            )
        given[name] = model  # type: ignore[index]
    return given


def judges(
    roles: Mapping[RoleName, RoleModel],
    config: ModelConfig,
    cache: bool = True,
    cache_dir: str | None = None,
) -> dict[str, ModelRole]:
    """The judge roles given, resolved (none without a judge, whatever the config says); a
    run's ``cache`` and ``cache_dir`` apply to its judges too."""
    if roles.get("fallback_judge") is not None and roles.get("judge") is None:
        raise UserError("a fallback judge needs a judge: name --judge too", "fallback_judge")
    caching = {"cache": None if cache else False, "cache_dir": cache_dir}
    return {
        name: resolve_role(name, config, roles[name], **caching)
        for name in JUDGES
        if roles.get(name) is not None
    }


def _listed(names: Collection[str]) -> str:
    quoted = [repr(name) for name in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
