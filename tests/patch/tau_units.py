"""Real τ-bench airline units for the patch tests, and small helpers to build patches."""

from __future__ import annotations

import functools
from typing import Any

from agent_backtest.formats import ReadOptions, SessionStream
from agent_backtest.formats.tools_file import load_tools_file
from agent_backtest.patch.ops import Patch
from agent_backtest.units import AgentConfig, Unit, units_from_session
from tests.conftest import TAU_TOOLS, TAU_TRAJECTORIES


@functools.cache
def tau_units(limit: int = 30) -> tuple[Unit, ...]:
    """The first ``limit`` units of the shipped τ-bench trajectories, with tools and model."""
    options = ReadOptions(tools=load_tools_file(TAU_TOOLS), recorded_model="gpt-4o")
    units: list[Unit] = []
    for session in SessionStream([TAU_TRAJECTORIES], options):
        units += [u for u in units_from_session(session, AgentConfig()) if isinstance(u, Unit)]
        if len(units) >= limit:
            break
    return tuple(units[:limit])


def first_unit() -> Unit:
    """The first τ-bench unit: the airline policy as system prompt, 14 tools."""
    return tau_units()[0]


def patch_of(*ops: dict[str, Any]) -> Patch:
    """A validated patch holding these ops."""
    return Patch.model_validate({"schema": "abt.patch/1", "ops": list(ops)})
