"""``simulate_judge()``: a verdict with owner and evidence for every conversation of a saved
simulate run, without replaying it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent_backtest.api.options import PathLike
from agent_backtest.api.roles import JUDGES, Roles, given_roles
from agent_backtest.simulate.judging import (
    JudgingHooks,
    JudgingOptions,
    JudgingOutcome,
    Rejudge,
    judge_run,
)

__all__ = ["JudgingHooks", "JudgingOutcome", "Rejudge", "simulate_judge"]


def simulate_judge(
    run: PathLike,
    *,
    roles: Roles | None = None,
    owners: PathLike | None = None,
    tools: PathLike | None = None,
    checks: Sequence[str] = (),
    resume: bool = False,
    rejudge: Rejudge | None = None,
    config_file: PathLike | None = None,
    cache: bool = True,
    checks_only: bool = False,
    hooks: JudgingHooks | None = None,
) -> JudgingOutcome:
    """Judge the conversations of the simulate run ``run``: verdicts.jsonl and judging.json.

    ``roles`` names the ``judge`` and the ``fallback_judge`` (default: the run's earlier
    judging, else ``[roles.judge]`` of the config); ``owners`` a file replacing the owner taxonomy;
    ``tools`` the agent's tool definitions (OpenAI function format) for the catalogue and the
    schema check; ``checks`` the user's checks as ``module:function``. A run judged before
    needs ``resume`` (judge the rest) or ``rejudge`` (``"uncertain"``: ask again where no
    verdict was reached; ``"all"``). With ``checks_only`` no judge is asked: the checks decide
    (a failing check fails, state checks that all hold pass, anything else stays unjudged).
    Everything is checked before a verdict is written or a
    judge is asked. ``hooks`` hears how many conversations are judged, and of each verdict.
    """
    judges = given_roles(roles, JUDGES)
    options = JudgingOptions(
        judge=judges.get("judge"),
        fallback_judge=judges.get("fallback_judge"),
        owners=Path(owners) if owners is not None else None,
        tools=Path(tools) if tools is not None else None,
        checks=tuple(checks),
        resume=resume,
        rejudge=rejudge,
        config_file=Path(config_file) if config_file is not None else None,
        cache=cache,
        checks_only=checks_only,
    )
    return judge_run(Path(run), options, hooks)
