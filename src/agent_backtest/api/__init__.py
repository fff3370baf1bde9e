"""The library under the ``abt`` command: every job is a function first.

Each function checks everything it can before it writes a file or pays for a call, and raises
:class:`agent_backtest.errors.UserError` for a mistake, naming the parameter at fault. Each name
is imported from its module on first use, so a command loads only the jobs it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_backtest.exports import lazy_exports

if TYPE_CHECKING:
    from agent_backtest.api.backends import (
        collect,
        pull_langfuse,
        pull_phoenix,
        push_otlp,
        push_phoenix,
    )
    from agent_backtest.api.bench import bench_resume, bench_run
    from agent_backtest.api.bench_exports import bench_export
    from agent_backtest.api.bench_reports import bench_report
    from agent_backtest.api.bench_rescoring import bench_rescore
    from agent_backtest.api.cache import cache_clear, cache_stats
    from agent_backtest.api.config import config_files
    from agent_backtest.api.costs import spent
    from agent_backtest.api.options import (
        AgentOptions,
        BatchOptions,
        CallOptions,
        CaseOptions,
        ExecutorOptions,
        GateBars,
        JudgeOptions,
        ReadingOptions,
        RolloutOptions,
        SelectionOptions,
    )
    from agent_backtest.api.patches import check_patch
    from agent_backtest.api.profiles import profile
    from agent_backtest.api.replays import replay, resume
    from agent_backtest.api.reports import compare, gate, report
    from agent_backtest.api.roles import ModelRole, RoleSettings
    from agent_backtest.api.schemas import schema
    from agent_backtest.api.scoring import score
    from agent_backtest.api.sessions import ingest
    from agent_backtest.api.shows import show
    from agent_backtest.api.simulate import simulate_generate, simulate_resume, simulate_run
    from agent_backtest.api.simulate_coverages import simulate_coverage
    from agent_backtest.api.simulate_judging import simulate_judge
    from agent_backtest.api.simulate_trace_joins import simulate_traces
    from agent_backtest.api.units import build_units, read_sessions, write_units

# Each public name and the module of this package that defines it.
_HOMES = {
    "AgentOptions": "agent_backtest.api.options",
    "BatchOptions": "agent_backtest.api.options",
    "CallOptions": "agent_backtest.api.options",
    "CaseOptions": "agent_backtest.api.options",
    "ExecutorOptions": "agent_backtest.api.options",
    "GateBars": "agent_backtest.api.options",
    "JudgeOptions": "agent_backtest.api.options",
    "ModelRole": "agent_backtest.api.roles",
    "RoleSettings": "agent_backtest.api.roles",
    "ReadingOptions": "agent_backtest.api.options",
    "RolloutOptions": "agent_backtest.api.options",
    "SelectionOptions": "agent_backtest.api.options",
    "collect": "agent_backtest.api.backends",
    "pull_langfuse": "agent_backtest.api.backends",
    "pull_phoenix": "agent_backtest.api.backends",
    "push_otlp": "agent_backtest.api.backends",
    "push_phoenix": "agent_backtest.api.backends",
    "bench_run": "agent_backtest.api.bench",
    "bench_resume": "agent_backtest.api.bench",
    "bench_export": "agent_backtest.api.bench_exports",
    "bench_report": "agent_backtest.api.bench_reports",
    "bench_rescore": "agent_backtest.api.bench_rescoring",
    "cache_clear": "agent_backtest.api.cache",
    "cache_stats": "agent_backtest.api.cache",
    "config_files": "agent_backtest.api.config",
    "spent": "agent_backtest.api.costs",
    "check_patch": "agent_backtest.api.patches",
    "profile": "agent_backtest.api.profiles",
    "replay": "agent_backtest.api.replays",
    "resume": "agent_backtest.api.replays",
    "compare": "agent_backtest.api.reports",
    "gate": "agent_backtest.api.reports",
    "report": "agent_backtest.api.reports",
    "schema": "agent_backtest.api.schemas",
    "score": "agent_backtest.api.scoring",
    "simulate_generate": "agent_backtest.api.simulate",
    "simulate_coverage": "agent_backtest.api.simulate_coverages",
    "simulate_judge": "agent_backtest.api.simulate_judging",
    "simulate_traces": "agent_backtest.api.simulate_trace_joins",
    "simulate_resume": "agent_backtest.api.simulate",
    "simulate_run": "agent_backtest.api.simulate",
    "build_units": "agent_backtest.api.units",
    "read_sessions": "agent_backtest.api.units",
    "write_units": "agent_backtest.api.units",
    "ingest": "agent_backtest.api.sessions",
    "show": "agent_backtest.api.shows",
}
__all__ = [
    "AgentOptions",
    "BatchOptions",
    "CallOptions",
    "CaseOptions",
    "ExecutorOptions",
    "GateBars",
    "JudgeOptions",
    "ModelRole",
    "ReadingOptions",
    "RoleSettings",
    "RolloutOptions",
    "SelectionOptions",
    "bench_export",
    "bench_report",
    "bench_rescore",
    "bench_resume",
    "bench_run",
    "build_units",
    "cache_clear",
    "cache_stats",
    "check_patch",
    "collect",
    "compare",
    "config_files",
    "gate",
    "ingest",
    "profile",
    "pull_langfuse",
    "pull_phoenix",
    "push_otlp",
    "push_phoenix",
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
    "spent",
    "write_units",
]

__getattr__ = lazy_exports(_HOMES, globals())
