"""The types of what the API's functions return, and the values a caller tests them against.

A caller tells a simulate run's report from a replay run's by its type, catches a teacher's
failure by its class, and ends a CI step with the exit code of a bar not met; each name is
imported from its module on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_backtest.exports import lazy_exports

if TYPE_CHECKING:
    pass

_HOMES = {
    "BAR_NOT_MET": "agent_backtest.reporting.gate",
    "Check": "agent_backtest.reporting.gate",
    "GenerationError": "agent_backtest.simulate.generation",
    "SimulateCompareOutcome": "agent_backtest.simulate.compare",
    "SimulateReport": "agent_backtest.simulate.report",
}
__all__ = sorted(_HOMES)

__getattr__ = lazy_exports(_HOMES, globals())
