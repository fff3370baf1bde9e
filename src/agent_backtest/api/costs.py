"""``spent()``: what a run of any kind spent, per role, at the prices in effect for it.

A replay's candidate is priced answer by answer from its results; every other role (a replay's
judges, and the agent, user, judge and teacher of simulate and bench runs) from the token totals
its run.json keeps per role. Prices are those of the run's config file (``[prices]``) over the
genai-prices table; see :mod:`agent_backtest.providers.prices`.
"""

from __future__ import annotations

from pathlib import Path

from agent_backtest.api.options import PathLike
from agent_backtest.providers import load_model_config
from agent_backtest.providers.prices import PriceTable
from agent_backtest.runs import RunDirectory
from agent_backtest.runs.manifest_base import run_kind
from agent_backtest.runs.spending import RoleSpend, replay_spend, roles_spend


def spent(run: PathLike) -> dict[str, RoleSpend]:
    """What the run at ``run`` spent by role, from the token counts its answers reported; a
    role whose model has no price says so (``unpriced``) and is never counted as 0."""
    path = Path(run)
    kind = run_kind(path)
    if kind == "replay":
        directory = RunDirectory(path)
        replay = directory.load_manifest()
        return replay_spend(directory, replay, _prices(replay.config.config_file))
    if kind == "simulate":
        from agent_backtest.simulate.manifest import SimulateManifest

        simulate = SimulateManifest.load(path / "run.json")
        return roles_spend(simulate, _prices(simulate.config_file))
    from agent_backtest.bench.run_manifest import BenchRunManifest

    bench = BenchRunManifest.load(path / "run.json")
    return roles_spend(bench, _prices(bench.config_file))


def _prices(config_file: str | None) -> PriceTable:
    return PriceTable(load_model_config(Path(config_file) if config_file else None).prices)
