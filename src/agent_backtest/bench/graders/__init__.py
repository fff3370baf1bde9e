"""Graders: each turns one ended episode and its case's gold into one reward component.

A grader is a function of a :class:`GradingInput` returning a :class:`Component`. It runs only
after every rollout of the run has ended, the one place where gold and an episode meet. A
component is a value in [0, 1], or None where the grader could not grade (no rubric items, a
judge that failed): unable to grade is never a zero.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agent_backtest.bench.environment import Environment
from agent_backtest.bench.models import Case, EpisodeRecord, Gold
from agent_backtest.episodes.judge_chain import Answer, Question
from agent_backtest.registry import Registry

__all__ = ["GRADERS", "Component", "Grader", "GradingInput", "JudgeCall", "JudgeUnavailable"]


class JudgeUnavailable(Exception):
    """The judge could not be asked (its calls failed after their retries): nothing to grade."""


class JudgeCall(Protocol):
    """The run's judge role, for graders that ask one."""

    def __call__(self, system: str, user: str) -> str:
        """One question (a system and a user prompt): the text of the answer; raises
        :class:`JudgeUnavailable` when the call fails."""
        ...

    def ask(self, question: Question[Answer]) -> Answer | None:
        """A question through the judge chain (its answer read strictly, a refused answer sent
        back once): the answer, or None when the judge gave none it could use."""
        ...


@dataclass(frozen=True)
class GradingInput:
    """What a grader may look at: the case, its gold, and the episode as it ended."""

    case: Case
    gold: Gold
    record: EpisodeRecord
    messages: list[dict[str, Any]]
    """The episode's transcript in the OpenAI chat format: system, user, assistant (with
    ``tool_calls``), tool; only the tool calls the environment ran are in it."""
    new_environment: Callable[[], Environment]
    """A fresh environment of the episode's kind, for graders that replay the gold actions."""
    judge: JudgeCall | None = None
    """The run's judge, when it has one (the rubric grader needs it)."""


@dataclass(frozen=True)
class Component:
    """One grader's value for one episode, with the reason when it is below 1 or missing."""

    value: float | None
    reason: str | None = None


Grader = Callable[[GradingInput], Component]


# The graders that come with abt, each imported only when a benchmark names it; installed
# packages add theirs under the entry point group agent_backtest.graders.
GRADERS = Registry(
    "agent_backtest.graders",
    "grader",
    {
        name: f"agent_backtest.bench.graders.{name}:grade"
        for name in ("final_state", "outputs", "tool_calls", "rubric")
    },
    "give your own as module:function",
    contract=("__call__",),
    references=True,
)
