"""The library under the ``abt`` command: every job is a function first.

Each function checks everything it can before it writes a file or pays for a call, and raises
:class:`agent_backtest.errors.UserError` for a mistake, naming the parameter at fault. Each name
is imported from its module on first use, so a command loads only the jobs it runs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_backtest.api.bench import bench_resume, bench_run
    from agent_backtest.api.options import (
        AgentOptions,
        BatchOptions,
        CallOptions,
        CaseOptions,
        ExecutorOptions,
        JudgeOptions,
        ReadingOptions,
        RolloutOptions,
        SelectionOptions,
    )
    from agent_backtest.api.profiles import profile
    from agent_backtest.api.replays import replay, resume
    from agent_backtest.api.reports import compare, gate, report
    from agent_backtest.api.scoring import score
    from agent_backtest.api.simulate import simulate_generate, simulate_resume, simulate_run
    from agent_backtest.api.simulate_coverage import simulate_coverage
    from agent_backtest.api.simulate_judge import simulate_judge
    from agent_backtest.api.units import build_units, read_sessions

# Each public name and the module of this package that defines it.
_HOMES = {
    "AgentOptions": "options",
    "BatchOptions": "options",
    "CallOptions": "options",
    "CaseOptions": "options",
    "ExecutorOptions": "options",
    "JudgeOptions": "options",
    "ReadingOptions": "options",
    "RolloutOptions": "options",
    "SelectionOptions": "options",
    "bench_run": "bench",
    "bench_resume": "bench",
    "profile": "profiles",
    "replay": "replays",
    "resume": "replays",
    "compare": "reports",
    "gate": "reports",
    "report": "reports",
    "score": "scoring",
    "simulate_generate": "simulate",
    "simulate_coverage": "simulate_coverage",
    "simulate_judge": "simulate_judge",
    "simulate_resume": "simulate",
    "simulate_run": "simulate",
    "build_units": "units",
    "read_sessions": "units",
}
__all__ = [
    "AgentOptions",
    "BatchOptions",
    "CallOptions",
    "CaseOptions",
    "ExecutorOptions",
    "JudgeOptions",
    "ReadingOptions",
    "RolloutOptions",
    "SelectionOptions",
    "bench_resume",
    "bench_run",
    "build_units",
    "compare",
    "gate",
    "profile",
    "read_sessions",
    "replay",
    "report",
    "resume",
    "score",
    "simulate_coverage",
    "simulate_generate",
    "simulate_judge",
    "simulate_resume",
    "simulate_run",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agent_backtest.api' has no attribute {name!r}")
    value = getattr(import_module(f"agent_backtest.api.{home}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value
