"""The judge chain: how one verdict is sought from the judge, then the fallback judge.

Each judge of the chain (its *seat*) is asked the question; an answer its parser refuses is
sent back once with what was wrong (the correction, worded by the caller); a judge that cannot
be reached, or gives no valid answer in two, hands over to the next seat. The chain stops at
the first valid answer. Replay's text and argument judge, simulate's conversation judge and
bench's rubric grader ask through it: each brings its prompt, its strict parser and its
correction, and reads the same record of what every seat did, so a failure is never a verdict
and is always named (a call that failed, an answer refused twice, a correction that failed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from agent_backtest.trace import LLMRequest, Message

if TYPE_CHECKING:  # a judge is held without loading the clients it asks through
    from agent_backtest.episodes.calls import ModelCaller
    from agent_backtest.providers.client import CallOutcome

Answer = TypeVar("Answer")
JUDGE_PARAMS: dict[str, Any] = {"temperature": 0}
"""Every judge question is asked at temperature 0."""

Failure = Literal["call_failed", "invalid_twice", "correction_failed"]


@dataclass(frozen=True)
class JudgeSeat:
    """One judge of a chain: its role, how its model is asked, and its names."""

    role: str
    """``judge`` or ``fallback_judge``."""
    caller: ModelCaller
    ref: str
    """provider/model, as recorded."""
    model: str
    """The model's name at its provider, as sent."""


@dataclass(frozen=True)
class Question(Generic[Answer]):
    """What the chain asks: the first messages, how an answer is read, and how a refused
    answer is sent back (given the first messages, the answer's text and what was wrong)."""

    messages: list[Message]
    parse: Callable[[str], tuple[Answer | None, str | None]]
    """(the answer, None), or (None, what was wrong)."""
    correction: Callable[[list[Message], str, str], list[Message]]


@dataclass
class SeatAnswer(Generic[Answer]):
    """What one seat gave: its answer, or how it failed, with its questions and last call."""

    seat: JudgeSeat
    answer: Answer | None
    asked: int
    outcome: CallOutcome | None
    """The last call's outcome (cache hit, request hash)."""
    failure: Failure | None = None
    problem: str | None = None
    """What was wrong with the first answer, or the failed call (its error's text)."""
    second_problem: str | None = None
    """What was wrong with the corrected answer, or the correction's failed call."""
    error_kind: str | None = None
    """The failed call's kind, or ``invalid_verdict`` for two refused answers."""

    @property
    def answered(self) -> bool:
        """Whether the judge answered at all (a refused answer is still an answer)."""
        return self.failure != "call_failed"


INVALID_VERDICT = "invalid_verdict"


async def ask_chain(
    seats: Sequence[JudgeSeat], question: Question[Answer], seed: int | None = 0
) -> list[SeatAnswer[Answer]]:
    """Each seat in turn until one gives a valid answer: what every seat asked gave (the last
    one holds the answer, when there is one)."""
    answers: list[SeatAnswer[Answer]] = []
    for seat in seats:
        answer = await ask_seat(seat, question, seed)
        answers.append(answer)
        if answer.answer is not None:
            break
    return answers


async def ask_seat(
    seat: JudgeSeat, question: Question[Answer], seed: int | None = 0
) -> SeatAnswer[Answer]:
    """One judge: the question, and the correction once when its answer was refused."""
    first, outcome = await _call(seat, question.messages, seed)
    if outcome.error is not None or outcome.response is None:
        return SeatAnswer(
            seat, None, 1, outcome, "call_failed", _error(outcome), None, _kind(outcome)
        )
    answer, problem = question.parse(first)
    if answer is not None:
        return SeatAnswer(seat, answer, 1, outcome)
    again = question.correction(question.messages, first, problem or "")
    second, outcome = await _call(seat, again, seed)
    if outcome.error is not None or outcome.response is None:
        failed = SeatAnswer(seat, None, 2, outcome, "correction_failed", problem, _error(outcome))
        failed.error_kind = _kind(outcome)
        return failed
    answer, second_problem = question.parse(second)
    if answer is not None:
        return SeatAnswer(seat, answer, 2, outcome)
    return SeatAnswer(
        seat, None, 2, outcome, "invalid_twice", problem, second_problem, INVALID_VERDICT
    )


async def _call(
    seat: JudgeSeat, messages: list[Message], seed: int | None
) -> tuple[str, CallOutcome]:
    """One question to one judge: the answer's text ('' when none) and the call's outcome."""
    request = LLMRequest(messages=messages, tools=None, params=dict(JUDGE_PARAMS))
    outcome = await seat.caller.generate(request, seat.model, seed)
    message = outcome.response.message if outcome.response is not None else None
    return (message.text() if message is not None else ""), outcome


def _error(outcome: CallOutcome) -> str:
    return str(outcome.error) if outcome.error is not None else "the judge gave no answer"


def _kind(outcome: CallOutcome) -> str:
    return outcome.error.kind if outcome.error is not None else "no_answer"
