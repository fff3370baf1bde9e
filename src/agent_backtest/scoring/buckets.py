"""Scoring one candidate answer against production's: answer type, tool, arguments, text, and
the bucket that names the kind of disagreement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent_backtest.runs import ResultRecord
from agent_backtest.runs.scores import ArgumentDifference, JudgeSummary, ScoreRecord
from agent_backtest.scoring.calls import CallsMatch, match_calls
from agent_backtest.scoring.injection import injection_signs
from agent_backtest.scoring.judge import Judge, JudgeResult
from agent_backtest.scoring.text import normalise_text, token_f1
from agent_backtest.scoring.verdict import Unscored
from agent_backtest.trace import LLMResponse, Message, ToolDef, canonical_json, sha256_of
from agent_backtest.units import AgentConfig, Unit
from agent_backtest.units.answer_key import CallKey, read_answer_keys
from agent_backtest.units.gold import UNSATISFIABLE
from agent_backtest.units.model import key_mismatch

SCORER = "abt-scorer/2"
JUDGE_PASS = 0.66  # a free-text argument at or above this judge score counts as equal
FreeText = Literal["equal", "differ", "unscored", "not_judged"]


@dataclass
class Scorer:
    """How answers are compared: the agent's rules, the matcher mode, and the judge if any."""

    agent: AgentConfig
    judge: Judge | None
    exact_strings: bool
    scoring_id: str
    gold: dict[str, tuple[int, list[CallKey]]] = field(init=False, repr=False)
    """The answer keys of the agent config's gold file, by unit id, with their line numbers."""

    def __post_init__(self) -> None:
        """Read the agent config's gold file, if it names one, before anything is scored."""
        source = self.agent.answer_keys
        self.gold = read_answer_keys(Path(source)) if source else {}

    async def score(self, unit: Unit, result: ResultRecord) -> ScoreRecord:
        """The score record of one (unit, repeat)."""
        base = self._base(unit, result)
        if result.error is not None or result.response is None:
            kind = result.error.kind if result.error else "malformed_response"
            return ScoreRecord(**base, status="infra_error", error_kind=kind)
        base["input_tokens_ratio"] = _input_tokens_ratio(unit.golden, result.response)
        golden, candidate = unit.golden.message, result.response.message
        base["candidate_tool"] = _first_tool(candidate)
        base["answer_signature"] = answer_signature(result.response)
        removed = set(result.removed_tools or ())
        if any(call.name in removed for call in golden.tool_calls or []):
            # The patch took away what production did: expected, not the candidate's failure.
            return ScoreRecord(
                **base,
                status="unscored",
                bucket="removed_tool_called_in_golden",
                unscored_reason="production called a tool the patch removed",
            )
        problem = self._key_problem(unit)
        if problem is not None:
            return ScoreRecord(
                **base, status="unscored", bucket=UNSATISFIABLE, unscored_reason=problem
            )
        if bool(golden.tool_calls) != bool(candidate.tool_calls):
            return ScoreRecord(
                **base,
                status="scored",
                strict=False,
                score=0.0,
                method="matcher",
                **_wrong_answer_type(unit, golden, candidate),
            )
        if golden.tool_calls:
            return await self._calls(unit, base, golden, candidate)
        return await self._text(unit, base, golden.text(), candidate.text())

    def _base(self, unit: Unit, result: ResultRecord) -> dict[str, Any]:
        return {
            "unit_id": unit.unit_id,
            "repeat": result.repeat,
            "session_id": unit.session_id,
            "node": unit.node,
            "kind": unit.kind,
            "split": unit.split,
            "agent_version": unit.agent_version,
            "model": result.model,
            "golden_tool": _first_tool(unit.golden.message),
            "scorer": SCORER,
            "scoring_id": self.scoring_id,
        }

    async def _calls(
        self, unit: Unit, base: dict[str, Any], golden: Message, candidate: Message
    ) -> ScoreRecord:
        tools = {tool.name: tool for tool in unit.request.tools or []}
        calls = match_calls(
            golden.tool_calls or [],
            candidate.tool_calls or [],
            tools,
            self.agent,
            self.exact_strings,
            self._answer_key(unit),
        )
        judged, free_text, free_text_scores, failure = await self._free_text(
            unit, calls, golden, tools
        )
        differences = [
            ArgumentDifference(
                call=pair.golden,
                path=m.path,
                kind=m.kind,
                golden=m.golden,
                candidate=m.candidate,
                required=m.required,
            )
            for pair in calls.pairs
            if pair.arguments is not None
            for m in pair.arguments.mismatches
        ]
        topic = None
        if unit.kind == "router":
            topic = (
                base["golden_tool"] is not None and base["golden_tool"] == base["candidate_tool"]
            )
        common = dict(
            differences=differences,
            missing_calls=len(calls.missing),
            extra_calls=len(calls.extra),
            judged=judged,
            topic_match=topic,
            suspected_injection=sorted(
                {sign for _, _, cand in _free_values(calls) for sign in injection_signs(str(cand))}
            ),
        )
        decided_without_text = _calls_bucket(calls, True, golden, candidate)[0] not in (
            "match",
            "match_equivalent",
        )
        if free_text == "unscored" and not decided_without_text and failure is not None:
            return _undecided(base | common, failure)
        if free_text == "not_judged" and not decided_without_text:
            similarity = sum(free_text_scores) / len(free_text_scores)
            return ScoreRecord(
                **base,
                **common,
                status="no_judge",
                bucket="text_not_judged",
                similarity=round(similarity, 6),
            )
        score = _call_score(calls, free_text_scores)
        bucket, reason = _calls_bucket(calls, free_text == "equal", golden, candidate)
        return ScoreRecord(
            **base,
            **common,
            status="scored",
            bucket=bucket,
            reason=reason,
            strict=bucket == "match" and calls.exact,
            score=score,
            method="judge" if any(j.score is not None for j in judged) else "matcher",
        )

    def _answer_key(self, unit: Unit) -> list[CallKey] | None:
        """The unit's answer key: its own, else the gold file's (one that fits the unit: see
        :meth:`_key_problem`)."""
        if unit.answer_key is not None or unit.unit_id not in self.gold:
            return unit.answer_key
        return self.gold[unit.unit_id][1]

    def _key_problem(self, unit: Unit) -> str | None:
        """Why the gold file's key of ``unit`` fits no answer (its line, and what is wrong), or
        None: the unit is then left out of the means, never scored 0."""
        if unit.answer_key is not None or unit.unit_id not in self.gold:
            return None
        line, key = self.gold[unit.unit_id]
        problem = key_mismatch(unit, key)
        return f"gold file line {line}: {problem}" if problem else None

    async def _free_text(
        self, unit: Unit, calls: CallsMatch, golden: Message, tools: dict[str, ToolDef]
    ) -> tuple[list[JudgeSummary], FreeText, list[float], Unscored | None]:
        """Decide every free-text argument of paired calls: (summaries, outcome, scores, why
        the first argument the judge could not decide was left undecided).

        The same text (normalised) is equal without asking anyone; otherwise the judge decides,
        and without a judge the argument is ``not_judged``, with its similarity for the record.
        """
        summaries: list[JudgeSummary] = []
        scores: list[float] = []
        outcomes: set[FreeText] = set()
        failure: Unscored | None = None
        for pair in calls.pairs:
            if pair.arguments is None:
                continue
            for param, gold, cand in pair.arguments.free_text:
                if normalise_text(str(gold)) == normalise_text(str(cand)):
                    scores.append(1.0)
                    continue
                target = f"call {pair.golden} argument {param}"
                if self.judge is None:
                    similarity = token_f1(str(gold), str(cand))
                    summaries.append(
                        JudgeSummary(
                            target=target, reasons=[f"not judged: similarity {similarity}"]
                        )
                    )
                    scores.append(similarity)
                    outcomes.add("not_judged")
                    continue
                call = (golden.tool_calls or [])[pair.golden]
                verdict = await self.judge.judge_argument(
                    unit.request.messages, tools.get(call.name), param, gold, cand
                )
                summaries.append(_summary(target, verdict))
                if verdict.unscored is not None:
                    outcomes.add("unscored")
                    failure = failure or verdict.unscored
                else:
                    scores.append(verdict.score)
                    outcomes.add("equal" if verdict.score >= JUDGE_PASS else "differ")
        worst_first: tuple[FreeText, ...] = ("unscored", "not_judged", "differ")
        outcome = next((o for o in worst_first if o in outcomes), "equal")
        return summaries, outcome, scores, failure

    async def _text(
        self, unit: Unit, base: dict[str, Any], golden: str, candidate: str
    ) -> ScoreRecord:
        base["suspected_injection"] = injection_signs(candidate)
        if normalise_text(golden) == normalise_text(candidate):
            return ScoreRecord(
                **base,
                status="scored",
                bucket="text_match",
                strict=True,
                score=1.0,
                method="exact_text",
            )
        if self.judge is None:
            return ScoreRecord(
                **base,
                status="no_judge",
                bucket="text_not_judged",
                similarity=token_f1(golden, candidate),
            )
        verdict = await self.judge.judge_text(unit.request.messages, golden, candidate)
        summary = _summary("text", verdict)
        if verdict.unscored is not None:
            return _undecided(base | {"judged": [summary]}, verdict.unscored)
        bucket = "text_match" if verdict.score >= JUDGE_PASS else "text_mismatch"
        return ScoreRecord(
            **base,
            status="scored",
            bucket=bucket,
            strict=False,
            score=verdict.score,
            method="judge",
            judged=[summary],
        )


def _undecided(fields: dict[str, Any], failure: Unscored) -> ScoreRecord:
    """The record of an answer the judge left undecided: a ``judge_error`` of its kind when the
    judge's calls failed (an outage, counted with infrastructure errors), else ``unscored``."""
    kind = failure.infrastructure_kind
    if kind is not None:
        return ScoreRecord(
            **fields, status="judge_error", error_kind=kind, unscored_reason=failure.reason
        )
    return ScoreRecord(
        **fields, status="unscored", bucket="unscored", unscored_reason=failure.reason
    )


def _calls_bucket(
    calls: CallsMatch, free_text_ok: bool, golden: Message, candidate: Message
) -> tuple[str, str | None]:
    """The bucket of a tool-call answer, and the reason where the bucket needs one.

    Right arguments on a tool of production's tool's equivalence group are
    ``match_equivalent``: the same action (lenient agreement) by another tool (never strict).
    """
    if any(not pair.same_tool for pair in calls.pairs):
        return "wrong_tool", None
    if calls.missing:
        return "missing_call", None
    if calls.extra:
        return "extra_call", None
    if not calls.equal or not free_text_ok:
        return "args_mismatch", None
    golden_calls, candidate_calls = golden.tool_calls or [], candidate.tool_calls or []
    renamed = [
        f"{candidate_calls[pair.candidate].name} called for production's "
        f"{golden_calls[pair.golden].name} (equivalent tools)"
        for pair in calls.pairs
        if golden_calls[pair.golden].name != candidate_calls[pair.candidate].name
    ]
    if renamed:
        return "match_equivalent", "; ".join(renamed)
    return "match", None


def _free_values(calls: CallsMatch) -> list[tuple[str, Any, Any]]:
    """Every free-text argument of the paired calls, as (name, golden, candidate)."""
    return [item for pair in calls.pairs if pair.arguments for item in pair.arguments.free_text]


def _call_score(calls: CallsMatch, free_text_scores: list[float]) -> float:
    """The matcher's score, with judged free-text arguments folded in as partial credit."""
    if not free_text_scores:
        return calls.score
    judged = sum(free_text_scores) / len(free_text_scores)
    return calls.score * judged if calls.equal else calls.score


def _summary(target: str, result: JudgeResult) -> JudgeSummary:
    first = result.verdicts[0] if result.verdicts else None
    return JudgeSummary(
        target=target,
        score=result.score,
        reasons=[v.reason for v in result.verdicts],
        judge=first.judge if first else (result.unscored.judge if result.unscored else None),
        prompt=first.prompt if first else None,
        prompt_sha256=first.prompt_sha256 if first else None,
        agreement=result.agreement,
        unscored_reason=result.unscored.reason if result.unscored else None,
    )


def _input_tokens_ratio(golden: LLMResponse, candidate: LLMResponse) -> float | None:
    """Candidate prompt tokens over production's for the same request, when both are known."""
    recorded = golden.usage.input_tokens if golden.usage else None
    reported = candidate.usage.input_tokens if candidate.usage else None
    if not recorded or reported is None:
        return None
    return round(reported / recorded, 4)


def _wrong_answer_type(unit: Unit, golden: Message, candidate: Message) -> dict[str, Any]:
    """The bucket and call counts of a text where production called a tool, or of a call where
    it answered in text (a router that answered in text missed its topic)."""
    if golden.tool_calls:
        return {
            "bucket": "text_instead_of_tool",
            "missing_calls": len(golden.tool_calls),
            "topic_match": False if unit.kind == "router" else None,
        }
    return {"bucket": "tool_instead_of_text", "extra_calls": len(candidate.tool_calls or [])}


def _first_tool(message: Message) -> str | None:
    return message.tool_calls[0].name if message.tool_calls else None


def answer_signature(response: LLMResponse) -> str:
    """A hash of the normalised answer: equal for answers that say the same thing the same way."""
    message = response.message
    if message.tool_calls:
        calls = sorted(
            canonical_json([c.name, c.arguments if c.arguments_raw is None else c.arguments_raw])
            for c in message.tool_calls
        )
        return sha256_of({"calls": [call.decode() for call in calls]})
    return sha256_of({"text": normalise_text(message.text())})
