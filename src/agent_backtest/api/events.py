"""What a caller sees while a replay goes, as hooks: its plan, its start, each result, its end
and its scoring.

Apart from ``api.replays`` so that a command's progress display can define its hooks without
loading the replay machinery (``abt replay --help`` stays fast).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_backtest.replaying.events import ReplayHooks

if TYPE_CHECKING:
    from pathlib import Path

    from agent_backtest.replaying.plan import ReplayPlan
    from agent_backtest.scoring.run import ScoreOutcome


@dataclass
class RunEvents(ReplayHooks):
    """What a caller sees while a replay goes: its start, each result, its end, its scoring."""

    on_planned: Callable[[ReplayPlan], None] = lambda plan: None
    on_scored: Callable[[Path, ScoreOutcome], None] = lambda path, outcome: None
