"""Run manifests for tests that lay out a run directory by hand."""

from __future__ import annotations

from typing import Any

from agent_backtest.providers.config import ModelRole
from agent_backtest.runs import RunManifest
from agent_backtest.runs.manifest import ReplaySettings


def replay_manifest(model: str, k: int = 1, **fields: Any) -> RunManifest:
    """A replay manifest whose candidate is ``model``, with ``k`` repeats."""
    settings = ReplaySettings(roles={"candidate": ModelRole(name="candidate", model=model)}, k=k)
    return RunManifest.new(settings, **fields)
