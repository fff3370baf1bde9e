"""The LLM judge: grades a candidate's text answer or free-text tool argument against production's.

Every judge call goes through a :class:`ModelClient` (cached, retried, counted) like replay calls.
One verdict is sought in up to four questions: the judge; the judge once more, quoting its
invalid answer and what was wrong with it; then the fallback judge the same way. A judge that
cannot be reached or never gives a valid verdict leaves the item **unscored**, with the reason
and the error kind: never a score of 0.

Both prompts use one scale (1, 0.66, 0.33, 0; meanings in the prompt files): free-text arguments
are graded on it too rather than as equivalent yes/no, so one parser, one record and one mean
serve both, and a near miss (a query with an extra qualifier) is told apart from a wrong value.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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
    INVALID_VERDICT,
    JudgeResult,
    Unscored,
    Verdict,
    VerdictAnswer,
    parse_verdict,
)
from agent_backtest.trace import LLMRequest, Message, ToolDef

if TYPE_CHECKING:  # the scorer holds a judge without loading the clients it asks through
    from agent_backtest.providers.client import CallOutcome, ModelClient

JUDGE_PARAMS: dict[str, Any] = {"temperature": 0}


@dataclass
class _Answer:
    """What one judge gave for one question chain: a verdict, or why not."""

    verdict: VerdictAnswer | None
    outcome: CallOutcome | None
    asked: int
    problem: str | None = None
    error_kind: str | None = None


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
        judges = [(self.client, self.ref, False)]
        if self.fallback is not None and self.fallback_ref is not None:
            judges.append((self.fallback[0], self.fallback_ref, True))
        asked = 0
        reasons = []
        answer: _Answer | None = None
        for client, ref, is_fallback in judges:
            answer = await self._ask(client, ref, prompt, candidate, seed)
            asked += answer.asked
            if answer.verdict is not None and answer.outcome is not None:
                return Verdict(
                    score=answer.verdict.score,
                    reason=answer.verdict.reason,
                    judge=str(ref),
                    prompt=prompt.template.id,
                    prompt_sha256=prompt.template.sha256,
                    attempts=asked,
                    fallback_used=is_fallback,
                    cache_hit=answer.outcome.cache_hit,
                    seed=seed,
                    request_sha=answer.outcome.request_sha,
                )
            reasons.append(f"{ref}: {answer.problem}")
        assert answer is not None
        return Unscored(
            reason="; then ".join(reasons), judge=str(judges[-1][1]), error_kind=answer.error_kind
        )

    async def _ask(
        self, client: ModelClient, ref: ModelRef, prompt: RenderedPrompt, candidate: str, seed: int
    ) -> _Answer:
        """Ask one judge, and once more with its answer quoted when that was not a verdict.

        ``candidate`` is the answer judged: an object the reply copies from it is no verdict.
        """
        messages = [
            Message(role="system", content=prompt.system),
            Message(role="user", content=prompt.user),
        ]
        first = await self._call(client, ref, messages, candidate, seed)
        if first.error_kind != INVALID_VERDICT:  # a verdict, or an error a retry will not fix
            return first
        text = _text(first.outcome)
        messages += [
            Message(role="assistant", content=text or "(no text)"),
            Message(role="user", content=prompt.correction(text, first.problem or "")),
        ]
        second = await self._call(client, ref, messages, candidate, seed)
        second.asked += first.asked
        if second.verdict is None and second.error_kind == INVALID_VERDICT:
            second.problem = (
                f"no valid verdict in two answers (first: {first.problem}; then: {second.problem})"
            )
        return second

    async def _call(
        self, client: ModelClient, ref: ModelRef, messages: list[Message], candidate: str, seed: int
    ) -> _Answer:
        """One question to one judge: its verdict, an invalid answer, or an infrastructure error."""
        request = LLMRequest(messages=messages, tools=None, params=dict(JUDGE_PARAMS))
        outcome = await client.generate(request, ref.model, seed)
        if outcome.error is not None:
            return _Answer(
                None, outcome, 1, f"judge call failed ({outcome.error})", outcome.error.kind
            )
        verdict, problem = parse_verdict(_text(outcome), candidate)
        if verdict is None:
            return _Answer(None, outcome, 1, problem, INVALID_VERDICT)
        return _Answer(verdict, outcome, 1)


def _text(outcome: CallOutcome | None) -> str:
    """The text of a judge's answer ('' when it has none)."""
    if outcome is None or outcome.response is None:
        return ""
    return outcome.response.message.text()
