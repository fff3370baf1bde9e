"""The LLM judge: grades a candidate's text answer or free-text tool argument against production's.

Every judge call goes through a :class:`ModelClient` (cached, retried, counted) like replay calls.
One verdict is sought through the judge chain (:mod:`agent_backtest.episodes.judge_chain`) in
up to four questions: the judge; the judge once more, quoting its invalid answer and what was
wrong with it; then the fallback judge the same way. A judge that
cannot be reached or never gives a valid verdict leaves the item **unscored**, with the reason
and the error kind: never a score of 0.

Both prompts use one scale (1, 0.66, 0.33, 0; meanings in the prompt files): free-text arguments
are graded on it too rather than as equivalent yes/no, so one parser, one record and one mean
serve both, and a near miss (a query with an extra qualifier) is told apart from a wrong value.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agent_backtest.episodes.judge_chain import JudgeSeat, Question, SeatAnswer, ask_chain
from agent_backtest.providers.families import check_judge
from agent_backtest.providers.refs import ModelRef, parse_model_ref
from agent_backtest.scoring.prompts import (
    FREE_TEXT_ARGUMENT,
    TEXT_ANSWER,
    RenderedPrompt,
    context_text,
    load_template,
    render,
    tool_text,
    value_text,
)
from agent_backtest.scoring.verdict import (
    JudgeResult,
    Unscored,
    Verdict,
    VerdictAnswer,
    parse_verdict,
)
from agent_backtest.trace import Message, ToolDef

if TYPE_CHECKING:  # the scorer holds a judge without loading the clients it asks through
    from agent_backtest.providers.client import ModelClient


class Judge:
    """An LLM judge on one model (and optionally a fallback), asked ``repeats`` times per item."""

    def __init__(
        self,
        client: ModelClient,
        model: str,
        fallback: tuple[ModelClient, str] | None = None,
        repeats: int = 1,
        seed: int = 0,
    ) -> None:
        if repeats < 1:
            raise ValueError(f"--judge-repeats must be at least 1, got {repeats}")
        self.client = client
        self.model = model
        self.ref: ModelRef = parse_model_ref(model, "judge")
        self.fallback = fallback
        self.fallback_ref = parse_model_ref(fallback[1], "fallback_judge") if fallback else None
        self.repeats = repeats
        self.seed = seed
        self.seats = [JudgeSeat("judge", client, str(self.ref), self.ref.model)]
        if fallback is not None and self.fallback_ref is not None:
            ref = self.fallback_ref
            self.seats.append(JudgeSeat("fallback_judge", fallback[0], str(ref), ref.model))

    def check(self, candidates: Iterable[str]) -> list[str]:
        """:func:`check_judge` for the judge and the fallback judge."""
        candidates = list(candidates)
        models = [self.model] + ([self.fallback[1]] if self.fallback else [])
        return [warning for model in models for warning in check_judge(model, candidates)]

    async def judge_text(self, context: list[Message], golden: str, candidate: str) -> JudgeResult:
        """Grade the candidate's text answer against production's, given the conversation."""
        prompt = render(
            load_template(TEXT_ANSWER),
            {
                "context": context_text(context),
                "reference": value_text(golden),
                "candidate": value_text(candidate),
            },
        )
        return await self._judge(prompt, candidate)

    async def judge_argument(
        self, context: list[Message], tool: ToolDef | None, param: str, golden: Any, candidate: Any
    ) -> JudgeResult:
        """Grade the candidate's free-text value of ``param`` against production's."""
        prompt = render(
            load_template(FREE_TEXT_ARGUMENT),
            {
                "context": context_text(context),
                "tool": tool_text(tool, param),
                "reference": value_text(golden),
                "candidate": value_text(candidate),
            },
        )
        return await self._judge(prompt, value_text(candidate))

    async def _judge(self, prompt: RenderedPrompt, candidate: str) -> JudgeResult:
        """Every repeat, one after another (items are what callers run in parallel)."""
        verdicts: list[Verdict] = []
        failures: list[Unscored] = []
        for repeat in range(self.repeats):
            result = await self._one(prompt, candidate, self.seed + repeat)
            (verdicts if isinstance(result, Verdict) else failures).append(result)
        return JudgeResult.of(verdicts, failures)

    async def _one(self, prompt: RenderedPrompt, candidate: str, seed: int) -> Verdict | Unscored:
        """One verdict from the judge, else from the fallback, else why there is none."""
        question = Question(
            [
                Message(role="system", content=prompt.system),
                Message(role="user", content=prompt.user),
            ],
            lambda text: parse_verdict(text, candidate),
            lambda first, text, problem: [
                *first,
                Message(role="assistant", content=text or "(no text)"),
                Message(role="user", content=prompt.correction(text, problem)),
            ],
        )
        answers = await ask_chain(self.seats, question, seed)
        last = answers[-1]
        if last.answer is not None and last.outcome is not None:
            return Verdict(
                score=last.answer.score,
                reason=last.answer.reason,
                judge=last.seat.ref,
                prompt=prompt.template.id,
                prompt_sha256=prompt.template.sha256,
                attempts=sum(answer.asked for answer in answers),
                fallback_used=last.seat.role == "fallback_judge",
                cache_hit=last.outcome.cache_hit,
                seed=seed,
                request_sha=last.outcome.request_sha,
            )
        reasons = [f"{answer.seat.ref}: {_problem(answer)}" for answer in answers]
        return Unscored(
            reason="; then ".join(reasons), judge=last.seat.ref, error_kind=last.error_kind
        )


def _problem(answer: SeatAnswer[VerdictAnswer]) -> str:
    """Why one judge gave no verdict, in the words scores.jsonl has always used."""
    if answer.failure == "call_failed":
        return f"judge call failed ({answer.problem})"
    if answer.failure == "correction_failed":
        return f"judge call failed ({answer.second_problem})"
    return (
        f"no valid verdict in two answers (first: {answer.problem}; then: {answer.second_problem})"
    )
