"""What made a run: abt's version and commit, Python's, the key libraries', and the endpoint each
role's calls went to. Every job records one :class:`Provenance` in run.json for each start of
the run (the first made it; each later one resumed it), so figures can be traced to the code and
the servers that made them, and two runs compared knowing what differed.

An endpoint is the base URL as resolved: the role's own, else its provider's (the config's or
the built-in default), never None for a model reached over the network; a model served in this
process (``local/…``, ``mock/…``) has none. A key is never recorded: an endpoint is written
without the user and password a URL may carry, and with any credential in its query redacted.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Iterable, Mapping
from importlib.metadata import PackageNotFoundError, version
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from agent_backtest.providers.config import ModelConfig, ModelRole
from agent_backtest.providers.refs import ModelRef
from agent_backtest.redaction import REDACTED, is_secret

DISTRIBUTION = "agent-backtest"
KEY_DISTRIBUTIONS = ("pydantic", "httpx", "typer")
"""Recorded for every run: the libraries every record and call goes through."""
OPTIONAL_DISTRIBUTIONS = ("llama-cpp-python", "ray")
"""Recorded when the run uses them: a model served in this process, the Ray executor."""


class Provenance(BaseModel):
    """What one start of a run ran on."""

    model_config = ConfigDict(extra="forbid")

    abt_version: str | None = Field(
        description="agent-backtest's installed version; None when it is not installed."
    )
    abt_commit: str | None = Field(
        description="The git commit abt ran from (+dirty with local changes), else GIT_COMMIT "
        "as set; None when neither is known."
    )
    python: str = Field(description="Python's implementation and version (CPython 3.12.3).")
    packages: dict[str, str] = Field(
        description="Installed versions of pydantic, httpx and typer, and of llama-cpp-python "
        "(a model served in this process) and ray (the Ray executor) when the run uses them, by "
        "distribution name."
    )
    endpoints: dict[str, dict[str, str | None]] = Field(
        description="Each role's models (provider/model) → the base URL their calls went to, "
        "as resolved; None for a model served in this process."
    )


def collect_provenance(
    roles: Mapping[str, ModelRole],
    config: ModelConfig,
    models: Mapping[str, Iterable[ModelRef]] | None = None,
    loads: Iterable[str] = (),
) -> Provenance:
    """The provenance of a start of a run with ``roles``, whose endpoints ``config`` resolves.

    ``models`` names a role's models where the role cannot (the candidate ``trace``: the models
    that served the units); ``loads`` the distributions of :data:`OPTIONAL_DISTRIBUTIONS` the
    run uses besides a local model's (``ray`` for the Ray executor).
    """
    endpoints = {
        name: role_endpoints(role, config, (models or {}).get(name)) for name, role in roles.items()
    }
    local = any(
        config.provider(ref.provider).type == "local"
        for name, role in roles.items()
        for ref in _refs(role, (models or {}).get(name))
    )
    loaded = {*loads, *(["llama-cpp-python"] if local else [])}
    return Provenance(
        abt_version=_installed(DISTRIBUTION),
        abt_commit=abt_commit(),
        python=f"{platform.python_implementation()} {platform.python_version()}",
        packages=package_versions(loaded),
        endpoints=endpoints,
    )


def role_endpoints(
    role: ModelRole, config: ModelConfig, models: Iterable[ModelRef] | None = None
) -> dict[str, str | None]:
    """Each model of ``role`` → the base URL its calls go to (see the module docstring)."""
    found = {}
    for ref in _refs(role, models):
        settings = config.provider(ref.provider, role.base_url, role.parameter)
        found[str(ref)] = safe_url(settings.base_url) if settings.base_url else None
    return dict(sorted(found.items()))


def _refs(role: ModelRole, models: Iterable[ModelRef] | None) -> list[ModelRef]:
    """The models a role calls: those named for it, else its own (none for ``trace``)."""
    if models is not None:
        return sorted(set(models))
    return [] if role.is_trace else [role.ref]


def safe_url(url: str) -> str:
    """``url`` without the user and password it may carry, and with each query parameter that
    names or holds a credential redacted (the others kept: an API version says which API)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port is not None else "")
    query = urlencode(
        [
            (name, REDACTED if is_secret(name, value) else value)
            for name, value in parse_qsl(parts.query, keep_blank_values=True)
        ],
        safe="[]",
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def abt_commit() -> str | None:
    """The commit abt runs from (see :attr:`Provenance.abt_commit`)."""
    from agent_backtest.runs.manifest_base import code_version

    made_by = code_version()
    if made_by.startswith("git:"):
        return made_by.removeprefix("git:")
    return os.environ.get("GIT_COMMIT", "").strip() or None


def package_versions(loaded: Iterable[str] = ()) -> dict[str, str]:
    """Versions of the key distributions, and of the optional ones named in ``loaded``; one
    that is not installed is left out."""
    used = set(loaded)
    names = [*KEY_DISTRIBUTIONS, *(name for name in OPTIONAL_DISTRIBUTIONS if name in used)]
    found = {name: _installed(name) for name in names}
    return {name: found_version for name, found_version in found.items() if found_version}


def _installed(distribution: str) -> str | None:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None
