"""Grading a run's episodes: the graders a benchmark names, each episode's total, grades.jsonl.

A benchmark's manifest names its graders in order: a built-in name (``final_state``,
``outputs``, ``tool_calls``, ``rubric``), a name an installed package adds, or
``module:function`` of a user's own grader (see :data:`~agent_backtest.bench.graders.GRADERS`).

**The total** of an episode is the product of the components that graded (a component that
could not grade, None, is left out): τ-bench's reading that every requirement must hold, so one
component at 0 makes the reward 0, and with 0/1 components the reward is 0/1. An episode
**passes** when its reward is 1. Three episodes get no components:

* an engineering error (the model endpoint failing, the environment raising, a timeout): no
  reward (None), left out of every mean and counted by kind, never a zero;
* an episode that hit ``max_steps`` without ending, when the rules say a reward needs an end:
  reward 0;
* an episode none of whose graders could grade: no reward (None).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from math import prod

from agent_backtest.bench.graders import (
    GRADERS,
    Component,
    Grader,
    GradingInput,
    JudgeUnavailable,
)
from agent_backtest.bench.models import EpisodeRules, GradeRecord
from agent_backtest.episodes.judge_chain import Answer, JudgeSeat, Question, SeatAnswer, ask_chain
from agent_backtest.errors import bounded
from agent_backtest.providers.client import ModelClient
from agent_backtest.redaction import redact
from agent_backtest.trace import Message

JUDGED = frozenset({"rubric"})


def resolve_graders(names: Sequence[str], parameter: str = "benchmark") -> list[tuple[str, Grader]]:
    """Each named grader's function, imported now so a wrong name stops the run before it
    starts."""
    return [(name, GRADERS.load(name, parameter)) for name in names]


def total(components: dict[str, float | None]) -> float | None:
    """The product of the components that graded; None when none did."""
    graded = [value for value in components.values() if value is not None]
    return round(prod(graded), 6) if graded else None


def grade_episode(
    given: GradingInput, graders: Sequence[tuple[str, Grader]], rules: EpisodeRules
) -> GradeRecord:
    """The grade of one episode (see the module docstring for the total)."""
    record = given.record
    grade = GradeRecord(
        episode_id=record.episode_id, case_id=record.case_id, rollout=record.rollout, reward=None
    )
    if record.error is not None:
        grade.reasons["error"] = record.error.kind
        return grade
    if record.ended_by == "step_limit" and rules.reward_requires_end:
        grade.reward = 0.0
        grade.reasons["ended"] = f"no end within max_steps ({rules.max_steps}): no reward"
        return grade
    for name, grader in graders:
        component = _run(grader, given)
        grade.components[name] = component.value
        if component.reason and (component.value is None or component.value < 1):
            grade.reasons[name] = component.reason
    grade.reward = total(grade.components)
    if grade.reward is None:
        grade.reasons["reward"] = "no grader could grade this episode"
    return grade


async def grade_all(
    inputs: Sequence[Callable[[JudgeBridge | None], GradingInput]],
    graders: Sequence[tuple[str, Grader]],
    rules: EpisodeRules,
    judge: tuple[ModelClient, str] | None,
    concurrency: int,
) -> list[GradeRecord]:
    """Grade every episode, ``concurrency`` at once, in order of ``inputs``.

    Graders are plain functions; each runs in a worker thread, and a judge they ask is called
    on this event loop, so the judge's calls share its client, cache and limits.
    """
    loop = asyncio.get_running_loop()
    bridge = JudgeBridge(judge[0], judge[1], loop) if judge is not None else None
    gate = asyncio.Semaphore(concurrency)

    async def one(make: Callable[[JudgeBridge | None], GradingInput]) -> GradeRecord:
        async with gate:
            return await asyncio.to_thread(grade_episode, make(bridge), graders, rules)

    return list(await asyncio.gather(*(one(make) for make in inputs)))


class JudgeBridge:
    """The judge role for graders running in worker threads: its questions go through the judge
    chain on ``loop``, with the run's client (cache, limits, counters)."""

    def __init__(self, client: ModelClient, model: str, loop: asyncio.AbstractEventLoop) -> None:
        self.seat = JudgeSeat("judge", client, model, model)
        self.loop = loop

    def __call__(self, system: str, user: str) -> str:
        """Ask the judge; raise :class:`JudgeUnavailable` when the call fails."""
        messages = [Message(role="system", content=system), Message(role="user", content=user)]
        asked = self._chain(Question(messages, lambda text: (text, None), lambda *_: []))
        if asked.answer is None:
            raise JudgeUnavailable(f"the judge call failed ({asked.problem})")
        return asked.answer

    def ask(self, question: Question[Answer]) -> Answer | None:
        """The question through the judge chain; None when the judge gave no usable answer."""
        return self._chain(question).answer

    def _chain(self, question: Question[Answer]) -> SeatAnswer[Answer]:
        coroutine = ask_chain([self.seat], question)
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()[-1]


def _run(grader: Grader, given: GradingInput) -> Component:
    """One grader's component; a grader that raises could not grade, and says why."""
    try:
        component = grader(given)
    except Exception as exc:
        why = bounded(redact(f"{type(exc).__name__}: {exc}"), 200)
        return Component(None, f"the grader failed: {why}")
    if component.value is not None and not 0.0 <= component.value <= 1.0:
        return Component(None, f"the grader gave {component.value}, outside [0, 1]")
    return component
