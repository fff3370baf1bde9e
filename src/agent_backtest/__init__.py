"""agent-backtest: what a change to an LLM agent would have done on its recorded traces.

The jobs are functions (``replay``, ``resume``, ``score``, ``report``, ``compare``, ``gate``,
``profile``, ``ingest``, ``show``, ``read_sessions``, ``build_units``, ``write_units``,
``check_patch``, ``simulate_*``, ``bench_*``, ``cache_*``, ``config_files``, ``schema``) with
their option groups, the typed roles (:class:`RoleSettings`, :class:`ModelRole`) and
:class:`Run`, a run directory opened for reading. They are imported on first use, so
``import agent_backtest`` and the command line stay quick to start.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_backtest.api import (
        AgentOptions,
        BatchOptions,
        CallOptions,
        CaseOptions,
        ExecutorOptions,
        JudgeOptions,
        ModelRole,
        ReadingOptions,
        RoleSettings,
        RolloutOptions,
        SelectionOptions,
        bench_export,
        bench_report,
        bench_rescore,
        bench_resume,
        bench_run,
        build_units,
        cache_clear,
        cache_stats,
        check_patch,
        compare,
        config_files,
        gate,
        ingest,
        profile,
        read_sessions,
        replay,
        report,
        resume,
        schema,
        score,
        show,
        simulate_coverage,
        simulate_generate,
        simulate_judge,
        simulate_resume,
        simulate_run,
        simulate_traces,
        write_units,
    )
    from agent_backtest.errors import InputError, UserError
    from agent_backtest.runs.run import Run

__all__ = [
    "AgentOptions",
    "BatchOptions",
    "CallOptions",
    "CaseOptions",
    "ExecutorOptions",
    "InputError",
    "JudgeOptions",
    "ModelRole",
    "ReadingOptions",
    "RoleSettings",
    "RolloutOptions",
    "Run",
    "SelectionOptions",
    "UserError",
    "bench_export",
    "bench_report",
    "bench_rescore",
    "bench_resume",
    "bench_run",
    "build_units",
    "cache_clear",
    "cache_stats",
    "check_patch",
    "compare",
    "config_files",
    "gate",
    "ingest",
    "profile",
    "read_sessions",
    "replay",
    "report",
    "resume",
    "schema",
    "score",
    "show",
    "simulate_coverage",
    "simulate_generate",
    "simulate_judge",
    "simulate_resume",
    "simulate_run",
    "simulate_traces",
    "write_units",
]
# Where each name lives; the rest of __all__ is the API's.
_HOMES = {
    "InputError": "agent_backtest.errors",
    "UserError": "agent_backtest.errors",
    "Run": "agent_backtest.runs.run",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":  # the package metadata is read only when asked for
        value: Any = _package_version()
    elif name in __all__:
        value = getattr(import_module(_HOMES.get(name, "agent_backtest.api")), name)
    else:
        raise AttributeError(f"module 'agent_backtest' has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


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
