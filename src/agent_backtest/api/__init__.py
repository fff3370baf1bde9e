"""The library under the ``abt`` command: every job is a function first.

Each function checks everything it can before it writes a file or pays for a call, and raises
:class:`agent_backtest.errors.UserError` for a mistake, naming the parameter at fault.
"""

from agent_backtest.api.options import (
    AgentOptions,
    CallOptions,
    JudgeOptions,
    ReadingOptions,
    SelectionOptions,
)
from agent_backtest.api.profiles import profile
from agent_backtest.api.replays import replay, resume
from agent_backtest.api.reports import compare, gate, report
from agent_backtest.api.scoring import score
from agent_backtest.api.units import build_units, read_sessions

__all__ = [
    "AgentOptions",
    "CallOptions",
    "JudgeOptions",
    "ReadingOptions",
    "SelectionOptions",
    "build_units",
    "compare",
    "gate",
    "profile",
    "read_sessions",
    "replay",
    "report",
    "resume",
    "score",
]
