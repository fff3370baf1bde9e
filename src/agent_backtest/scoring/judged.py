"""Scoring with a judge: answers are scored concurrently, up to the judge role's concurrency,
and written in unit then repeat order.

Imported only when a judge is set: a scoring without one waits on nothing, and starts without
the event loop, the model clients and their libraries.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from agent_backtest.providers import CallCounters, ModelClient, ModelConfig
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.roles import close_clients, open_clients
from agent_backtest.runs import ResultRecord
from agent_backtest.runs.records import ResultIndex
from agent_backtest.runs.scores import ScoreRecord
from agent_backtest.scoring.buckets import Scorer
from agent_backtest.scoring.judge import Judge
from agent_backtest.units import Unit

if TYPE_CHECKING:
    from agent_backtest.scoring.run import ScoreSettings


def score_with_judge(
    units: Iterable[Unit],
    results: ResultIndex,
    settings: ScoreSettings,
    config: ModelConfig,
    counters: Mapping[str, CallCounters],
    write: Callable[[ScoreRecord], None],
) -> None:
    """Score each unit's results, asking the judge of ``settings`` through clients of
    ``config`` (each judge role's calls counted in ``counters[role]``), and ``write`` each
    score in order."""
    role = settings.judge
    if role is None:
        raise ValueError("scoring with a judge needs one")

    async def score_all() -> None:
        judge, clients = _judge(role, settings, config, counters)
        scorer = Scorer(settings.agent, judge, settings.exact_strings, settings.scoring_id())
        try:
            await _score_in_order(units, results, scorer, role.concurrency, write)
        finally:
            await close_clients(clients)

    asyncio.run(score_all())


async def _score_in_order(
    units: Iterable[Unit],
    results: ResultIndex,
    scorer: Scorer,
    width: int,
    write: Callable[[ScoreRecord], None],
) -> None:
    """Score up to ``width`` answers at once, writing each score once every answer before it
    is written."""
    done: list[tuple[int, int, ScoreRecord]] = []  # a heap: scored ahead of one still scoring
    in_flight: dict[asyncio.Task[tuple[int, int, ScoreRecord]], tuple[int, int]] = {}

    async def one(index: int, unit: Unit, result: ResultRecord) -> tuple[int, int, ScoreRecord]:
        return index, result.repeat, await scorer.score(unit, result)

    async def settle(return_when: str) -> None:
        finished, _ = await asyncio.wait(in_flight, return_when=return_when)
        for task in finished:
            del in_flight[task]
            heapq.heappush(done, task.result())
        first = min(in_flight.values(), default=None)
        while done and (first is None or done[0][:2] < first):
            write(heapq.heappop(done)[2])

    try:
        # Units stream from disk: at most `width` answers are being scored at once, so a unit
        # (which carries its whole request) is released as soon as its answers are scored.
        for index, unit in enumerate(units):
            for result in results.of_unit(unit.unit_id):
                if width == 1:  # one answer at a time: no task per answer
                    write(await scorer.score(unit, result))
                    continue
                if len(in_flight) >= width:
                    await settle(asyncio.FIRST_COMPLETED)
                task = asyncio.create_task(one(index, unit, result))
                in_flight[task] = (index, result.repeat)
        if in_flight:
            await settle(asyncio.ALL_COMPLETED)
    finally:
        for task in in_flight:
            task.cancel()


def _judge(
    main_role: ModelRole,
    settings: ScoreSettings,
    config: ModelConfig,
    counters: Mapping[str, CallCounters],
) -> tuple[Judge, list[ModelClient]]:
    """The judge, asking through one client per judge role, and the clients to close."""
    fallback_role = settings.fallback_judge
    main = open_clients(main_role, [main_role.ref], config, counters["judge"])[main_role.ref]
    fallback = None
    if fallback_role is not None:
        fallback_counters = counters["fallback_judge"]
        fallback = open_clients(fallback_role, [fallback_role.ref], config, fallback_counters)[
            fallback_role.ref
        ]
    judge = Judge(
        main,
        main_role.model,
        (fallback, fallback_role.model) if fallback and fallback_role else None,
        repeats=settings.judge_repeats,
    )
    return judge, [main, *([fallback] if fallback else [])]
