"""Replay units: one per recorded LLM step, with selection and splits.

Each public name is imported from its module on first use: the API's option groups take the
split's salt from here without loading the unit models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_backtest.exports import lazy_exports

if TYPE_CHECKING:
    from agent_backtest.units.agent_config import AgentConfig, load_agent_config
    from agent_backtest.units.build import UnitSkip, classify, reclassify, units_from_session
    from agent_backtest.units.exclusions import ExcludedSessions, read_session_ids
    from agent_backtest.units.io import is_units_file, read_units_file
    from agent_backtest.units.model import UNIT_SCHEMA, Unit, make_unit_id
    from agent_backtest.units.selection import (
        DEFAULT_SPLIT_SALT,
        ExclusionSummary,
        Selection,
        split_of,
    )

# Each public name and the module that defines it.
_HOMES = {
    "AgentConfig": "agent_backtest.units.agent_config",
    "load_agent_config": "agent_backtest.units.agent_config",
    "UnitSkip": "agent_backtest.units.build",
    "classify": "agent_backtest.units.build",
    "reclassify": "agent_backtest.units.build",
    "units_from_session": "agent_backtest.units.build",
    "ExcludedSessions": "agent_backtest.units.exclusions",
    "read_session_ids": "agent_backtest.units.exclusions",
    "is_units_file": "agent_backtest.units.io",
    "read_units_file": "agent_backtest.units.io",
    "UNIT_SCHEMA": "agent_backtest.units.model",
    "Unit": "agent_backtest.units.model",
    "make_unit_id": "agent_backtest.units.model",
    "DEFAULT_SPLIT_SALT": "agent_backtest.units.selection",
    "ExclusionSummary": "agent_backtest.units.selection",
    "Selection": "agent_backtest.units.selection",
    "split_of": "agent_backtest.units.selection",
}
__all__ = [
    "DEFAULT_SPLIT_SALT",
    "UNIT_SCHEMA",
    "AgentConfig",
    "ExcludedSessions",
    "ExclusionSummary",
    "Selection",
    "Unit",
    "UnitSkip",
    "classify",
    "is_units_file",
    "load_agent_config",
    "make_unit_id",
    "read_session_ids",
    "read_units_file",
    "reclassify",
    "split_of",
    "units_from_session",
]

__getattr__ = lazy_exports(_HOMES, globals())
