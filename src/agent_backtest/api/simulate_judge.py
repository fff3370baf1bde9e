"""``simulate_judge()``: a verdict with owner and evidence for every conversation of a saved
simulate run, without replaying it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent_backtest.api.options import PathLike
from agent_backtest.runs.lock import run_lock
from agent_backtest.simulate.judging import (
    JudgingOutcome,
    Rejudge,
    judge_locked,
    plan_judging,
    read_run,
)


def simulate_judge(
    run: PathLike,
    *,
    judge: str | None = None,
    fallback_judge: str | None = None,
    owners: PathLike | None = None,
    tools: PathLike | None = None,
    checks: Sequence[str] = (),
    resume: bool = False,
    rejudge: Rejudge | None = None,
    config_file: PathLike | None = None,
    cache: bool = True,
) -> JudgingOutcome:
    """Judge the conversations of the simulate run ``run``: verdicts.jsonl and judging.json.

    ``judge`` and ``fallback_judge`` are provider/model (default: the run's earlier judging,
    else ``[roles.judge]`` of the config); ``owners`` a file replacing the owner taxonomy;
    ``tools`` the agent's tool definitions (OpenAI function format) for the catalogue and the
    schema check; ``checks`` the user's checks as ``module:function``. A run judged before
    needs ``resume`` (judge the rest) or ``rejudge`` (``"uncertain"``: ask again where no
    verdict was reached; ``"all"``). Everything is checked before a verdict is written or a
    judge is asked.
    """
    path = Path(run)
    read_run(path)  # a folder that is not a simulate run fails before the lock is made
    with run_lock(path, "judge"):
        plan = plan_judging(
            path,
            judge=judge,
            fallback_judge=fallback_judge,
            owners=Path(owners) if owners is not None else None,
            tools=Path(tools) if tools is not None else None,
            checks=checks,
            resume=resume,
            rejudge=rejudge,
            config_file=Path(config_file) if config_file is not None else None,
            cache=cache,
        )
        return judge_locked(plan)
