"""How a turn record names an error the agent itself reported, so that the checks can tell it
from a transport failure without importing the targets that record it."""

from __future__ import annotations

AGENT_ERROR_PREFIX = "agent: "
"""How a turn record's ``error`` starts when the agent itself reported the failure."""
STEP_LIMIT = "step_limit"
"""The error kind of a built-in agent loop that reached ``max_steps`` without a text answer."""
