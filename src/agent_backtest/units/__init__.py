"""Replay units: one per recorded LLM step, with selection and splits."""

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
