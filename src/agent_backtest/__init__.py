"""agent-backtest: what a change to an LLM agent would have done on its recorded traces.

The jobs are functions (``replay``, ``resume``, ``score``, ``report``, ``compare``, ``gate``,
``profile``, ``ingest``, ``show``, ``read_sessions``, ``build_units``, ``write_units``,
``check_patch``, ``simulate_*``, ``bench_*``, ``cache_*``, ``config_files``, ``schema``) with
their option groups, the typed roles (:class:`RoleSettings`, :class:`ModelRole`) and
:class:`Run`, a run directory opened for reading. They are imported on first use, so
``import agent_backtest`` and the command line stay quick to start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_backtest import api
from agent_backtest.exports import lazy_exports

if TYPE_CHECKING:
    from agent_backtest.api import *  # noqa: F403 (the API's names, listed in its __all__)
    from agent_backtest.errors import InputError, UserError
    from agent_backtest.runs.run import Run

# The API's names, and the few that live elsewhere.
_HOMES = dict.fromkeys(api.__all__, "agent_backtest.api") | {
    "InputError": "agent_backtest.errors",
    "UserError": "agent_backtest.errors",
    "Run": "agent_backtest.runs.run",
}
__all__ = ["InputError", "Run", "UserError"]
__all__ += api.__all__

_exported = lazy_exports(_HOMES, globals())


def __getattr__(name: str) -> Any:
    if name == "__version__":  # the package metadata is read only when asked for
        value: Any = _package_version()
        globals()[name] = value  # later look-ups skip this function
        return value
    return _exported(name)


def _package_version() -> str:
    """The installed package's version; in a source tree that is not installed, pyproject's."""
    from importlib import metadata

    try:
        return metadata.version("agent-backtest")
    except metadata.PackageNotFoundError:
        import tomllib
        from pathlib import Path

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
