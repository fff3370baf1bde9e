"""The conversation judge: one recorded conversation in, the judge's decision out.

Every question goes through the run's calls of the judge roles (cached, retried, counted). A
decision is sought through the judge chain (:mod:`agent_backtest.episodes.judge_chain`) in up
to four questions: the judge; the judge once more with the correction request (its invalid
answer quoted, the tool catalogue left out); then the fallback judge the same way.
An answer is read strictly (:func:`parse_answer`): one JSON verdict object of the judge's own
(an object copied from the conversation is a quotation, not its verdict), and a fail must name
an owner of the taxonomy, a category, the turns that failed and evidence; placeholder text is
refused. When no judge gives a valid answer the decision is ``judge_invalid``, and when none
could be reached ``judge_unavailable``: the conversation is then ``uncertain``, never a pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent_backtest.episodes.judge_chain import JudgeSeat, Question, SeatAnswer, ask_chain
from agent_backtest.errors import bounded
from agent_backtest.scoring.prompts import PromptTemplate
from agent_backtest.scoring.verdict import json_objects
from agent_backtest.simulate.models import ConversationRecord, Flow
from agent_backtest.simulate.rubric import NOBODY, Owners, render
from agent_backtest.trace import Message, ToolDef

JUDGE_SEED = 0
MAX_CATEGORY = 64
_PLACEHOLDERS = frozenset(
    {"n/a", "na", "none", "null", "nil", "tbd", "todo", "evidence", "string", "text", "unknown"}
    | {"placeholder", "lorem ipsum", "...", "xxx", "same as above", "see above"}
)
_NOT_WORD = re.compile(r"[^a-z0-9]+")


def is_placeholder(text: str) -> bool:
    """True for text that says nothing: empty, no letters, a template's ``<…>`` or a filler."""
    value = " ".join(text.split()).lower().strip(" .!")
    if sum(ch.isalnum() for ch in value) < 3:
        return True
    return value in _PLACEHOLDERS or (value.startswith("<") and value.endswith(">"))


class JudgeAnswer(BaseModel):
    """The verdict a judge must answer (the rubric's output contract)."""

    model_config = ConfigDict(extra="ignore")

    verdict: Literal["pass", "fail", "uncertain"]
    score: int = Field(ge=0, le=100)
    owner: str | None = None
    failure_category: str | None = None
    failed_turns: list[int] = Field(default_factory=list)
    evidence: str

    @field_validator("verdict", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        """``"Fail"`` is ``fail``."""
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("score", mode="before")
    @classmethod
    def _whole_number(cls, value: Any) -> Any:
        """A whole number (``85`` or ``85.0``); never true/false or text."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"must be a whole number from 0 to 100, got {value!r}")
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(f"must be a whole number, got {value}")
        return int(value)

    @field_validator("failed_turns", mode="before")
    @classmethod
    def _turn_numbers(cls, value: Any) -> Any:
        """A list of turn numbers, never true/false."""
        if not isinstance(value, list) or any(isinstance(v, bool) for v in value):
            raise ValueError("must be a list of turn numbers")
        return value

    @field_validator("evidence")
    @classmethod
    def _says_something(cls, value: str) -> str:
        """Evidence a person can check: not empty, not a placeholder."""
        if is_placeholder(value):
            raise ValueError(f"must say what the recording shows, not {value!r}")
        return value.strip()


def contract_problem(answer: JudgeAnswer, owners: Owners, turns: int) -> str | None:
    """What makes a well-formed answer unusable for this conversation, or None."""
    if answer.verdict == "fail":
        if answer.owner not in owners.of_failures():
            return f"owner: a fail needs one of {', '.join(owners.of_failures())}"
        category = answer.failure_category or ""
        if is_placeholder(category) or len(category) > MAX_CATEGORY:
            return "failure_category: a fail needs a short snake_case category"
        if not answer.failed_turns:
            return "failed_turns: a fail needs the numbers of the turns that failed"
    elif answer.failed_turns:
        return f"failed_turns: a {answer.verdict} names no failed turns"
    outside = [turn for turn in answer.failed_turns if not 1 <= turn <= turns]
    if outside:
        return f"failed_turns: {outside} are not turns of this conversation (1 to {turns})"
    return None


def parse_answer(
    text: str | None, quoted: list[dict[str, Any]], owners: Owners, turns: int
) -> tuple[JudgeAnswer | None, str | None]:
    """(the answer, None) when ``text`` holds exactly one valid verdict of the judge's own,
    else (None, what was wrong); ``quoted`` are the objects of the judged material."""
    if not text or not text.strip():
        return None, "the answer was empty"
    objects = json_objects(text)
    if not objects:
        return None, "no JSON object was found in the answer"
    own = [found for found in objects if found not in quoted]
    if not own:
        return None, (
            "the only JSON object in the answer is copied from the conversation; "
            "give your own verdict"
        )
    shaped = [found for found in own if "verdict" in found] or own[:1]
    answers: list[JudgeAnswer] = []
    problems: list[str] = []
    for found in shaped:
        try:
            answer = JudgeAnswer.model_validate(found)
        except ValidationError as error:
            problems.append(_problems(error))
            continue
        problem = contract_problem(answer, owners, turns)
        if problem is None:
            answers.append(_normalised(answer))
        else:
            problems.append(problem)
    distinct = {answer.model_dump_json() for answer in answers}
    if len(distinct) == 1:
        return answers[0], None
    if len(distinct) > 1:
        return None, "the answer holds more than one verdict; give exactly one"
    return None, problems[0]


def _normalised(answer: JudgeAnswer) -> JudgeAnswer:
    """A fail's category in snake_case; a pass or uncertain owns nothing."""
    if answer.verdict != "fail":
        return answer.model_copy(update={"owner": None, "failure_category": None})
    category = _NOT_WORD.sub("_", (answer.failure_category or "").lower()).strip("_")
    return answer.model_copy(update={"failure_category": category})


def _problems(error: ValidationError) -> str:
    """One line per field, e.g. ``score: Input should be less than or equal to 100``."""
    lines = []
    for problem in error.errors():
        field = ".".join(str(part) for part in problem["loc"]) or "answer"
        lines.append(f"{field}: {problem['msg'].removeprefix('Value error, ')}")
    return "; ".join(lines)


@dataclass
class Decision:
    """What the judges gave for one conversation: an answer and who gave it, or why none."""

    answer: JudgeAnswer | None
    decided_by: Literal["judge", "fallback_judge"] | None
    model: str | None
    reason: Literal["judge_invalid", "judge_unavailable"] | None
    detail: str | None


class ConversationJudge:
    """Asks the judge, then the fallback judge, for the verdict on one conversation."""

    def __init__(
        self,
        judges: list[JudgeSeat],
        owners: Owners,
        tools: list[ToolDef] | None,
        rubric: PromptTemplate,
    ) -> None:
        if not judges:
            raise ValueError("a conversation judge needs a judge")
        self.judges = judges
        self.owners = owners
        self.tools = tools
        self.rubric = rubric

    async def decide(self, flow: Flow, conversation: ConversationRecord) -> Decision:
        """The first valid answer of the judges in turn, or why there is none."""
        prompt = render(flow, conversation, self.tools, self.owners, self.rubric)
        quoted = json_objects(prompt.blocks["flow"] + prompt.blocks["conversation"])
        turns = len(conversation.turns)
        question = Question(
            [
                Message(role="system", content=prompt.system),
                Message(role="user", content=prompt.user),
            ],
            lambda text: parse_answer(text, quoted, self.owners, turns),
            lambda first, text, problem: [
                Message(role="system", content=prompt.system),
                Message(role="user", content=prompt.correction(text or "(no text)", problem)),
            ],
        )
        answers = await ask_chain(self.judges, question, JUDGE_SEED)
        last = answers[-1]
        if last.answer is not None:
            return Decision(last.answer, last.seat.role, last.seat.ref, None, None)  # type: ignore[arg-type]
        problems = [f"{answer.seat.ref}: {_problem(answer)}" for answer in answers]
        answered = any(answer.answered for answer in answers)
        reason = "judge_invalid" if answered else "judge_unavailable"
        return Decision(None, None, None, reason, bounded("; then ".join(problems)))


def _problem(answer: SeatAnswer[JudgeAnswer]) -> str:
    """Why one judge gave no decision, in the words verdicts.jsonl has always used."""
    if answer.failure == "call_failed":
        return f"the call failed ({answer.problem})"
    if answer.failure == "correction_failed":
        failed = f"the call failed ({answer.second_problem})"
        return f"{answer.problem}; then the correction failed ({failed})"
    return f"no valid verdict in two answers ({answer.problem}; then {answer.second_problem})"


def judged_owner(decision: Decision) -> str | None:
    """The owner the judge gave (None when it gave none, or passed the conversation)."""
    if decision.answer is None or decision.answer.owner in (None, NOBODY):
        return None
    return decision.answer.owner
