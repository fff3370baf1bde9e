"""What a run spent, printed after the run: one line, every role with its cost."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from agent_backtest import api

if TYPE_CHECKING:
    from agent_backtest.runs.spending import RoleSpend


def spent_line(spent: Mapping[str, RoleSpend]) -> str:
    """``spent: agent $0.0123 · user unpriced (local/smollm2)``."""
    return "spent: " + " · ".join(f"{role} {spend.text()}" for role, spend in spent.items())


def print_spent(console: Console, run: Path) -> None:
    """What the run at ``run`` spent by role; nothing when no role called a model."""
    spent = api.spent(run)
    if spent:
        console.print(spent_line(spent), markup=False)
