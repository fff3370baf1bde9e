"""Judge verdicts: the records a judged item leaves, and reading a verdict out of a model's text.

A judge answers in prose that should hold one JSON object ``{"reason": …, "score": …}``.
:func:`json_objects` finds every complete top-level object in whatever came back (fenced or not,
with prose around it); :func:`parse_verdict` keeps those that validate against the rubric's scale
and are not copies of an object in the candidate's answer. The verdict is the one that remains:
a reply whose only verdict-shaped object was quoted from the candidate (an answer that tries to
score itself), or that holds two different verdicts, is invalid, and the judge is asked again
with what was wrong.
"""

from __future__ import annotations

import json
import math
from itertools import combinations
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from agent_backtest.episodes.judge_chain import INVALID_VERDICT
from agent_backtest.runs.scores import JUDGE_ERROR_PREFIX

SCALE: tuple[float, ...] = (1.0, 0.66, 0.33, 0.0)
# A judge that writes 0.67 or 0.34 means the level next to it; anything farther is not a level.
SCALE_TOLERANCE = 0.015

_DECODER = json.JSONDecoder()


class VerdictAnswer(BaseModel):
    """What the judge must answer: a score on the rubric's scale and a non-empty reason."""

    score: float = Field(description="One of 1, 0.66, 0.33, 0.")
    reason: str = Field(description="Why, in the judge's words.")

    @field_validator("score", mode="before")
    @classmethod
    def _on_scale(cls, value: Any) -> float:
        """Snap a score to its level; refuse booleans, non-numbers and values between levels."""
        if isinstance(value, bool):
            raise ValueError("must be a number, not true/false")
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                raise ValueError(f"must be a number, got {value!r}") from None
        if not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(f"must be a number, got {value!r}")
        for level in SCALE:
            if abs(value - level) <= SCALE_TOLERANCE:
                return level
        raise ValueError(f"must be one of 1, 0.66, 0.33, 0 (got {value})")

    @field_validator("reason")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        """A verdict without a reason cannot be checked by a person."""
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()


class Verdict(BaseModel):
    """One valid verdict of a judge on one item, with where it came from."""

    score: float = Field(description="The judge's score: 1, 0.66, 0.33 or 0.")
    reason: str = Field(description="The judge's reason for the score.")
    judge: str = Field(description="The judge model that gave it, as provider/model.")
    prompt: str = Field(description="The prompt template, as name@version.")
    prompt_sha256: str = Field(description="sha256:… of the template file's text.")
    attempts: int = Field(
        description="Questions asked to get this verdict: 1, 2 after a correction, "
        "3 or 4 when the fallback judge gave it."
    )
    fallback_used: bool = Field(description="True when the fallback judge gave the verdict.")
    cache_hit: bool = Field(description="True when the answer holding the verdict was cached.")
    seed: int | None = Field(default=None, description="Seed the judge was called with.")
    request_sha: str | None = Field(
        default=None, description="sha256 of the judge request that gave the verdict."
    )


class Unscored(BaseModel):
    """Why an item has no verdict: it is left out of means and counted, never scored 0."""

    reason: str = Field(description="What went wrong, for a person.")
    judge: str | None = Field(default=None, description="The last judge asked, provider/model.")
    error_kind: str | None = Field(
        default=None,
        description="How the last judge asked failed: a provider error kind (http_429, "
        "timeout, …) for an infrastructure failure, or 'invalid_verdict'.",
    )

    @property
    def infrastructure_kind(self) -> str | None:
        """The judge's infrastructure error kind (``judge_http_5xx``, ``judge_timeout``, …) when
        its last call failed; None when it answered but never validly (``invalid_verdict``),
        which is a judge's answer and no outage."""
        if self.error_kind is None or self.error_kind == INVALID_VERDICT:
            return None
        return JUDGE_ERROR_PREFIX + self.error_kind


class JudgeResult(BaseModel):
    """All verdicts on one item (one per repeat that gave one) and what they add up to."""

    verdicts: list[Verdict] = Field(default_factory=list)
    unscored: Unscored | None = Field(
        default=None, description="Set when no repeat gave a verdict; the item is unscored."
    )
    score: float | None = Field(
        default=None, description="Mean score of the verdicts; None when unscored."
    )
    agreement: float | None = Field(
        default=None,
        description="Share of pairs of verdicts with the same score "
        "(two verdicts or more; None otherwise).",
    )
    failures: list[Unscored] = Field(
        default_factory=list,
        description="Repeats that gave no verdict, when others did (left out of the mean).",
    )

    @classmethod
    def of(cls, verdicts: list[Verdict], failures: list[Unscored]) -> JudgeResult:
        """The result of a set of repeats: the mean and agreement of those that gave a verdict."""
        if not verdicts:
            last = failures[-1] if failures else Unscored(reason="the judge was not asked")
            return cls(unscored=last, failures=failures[:-1])
        scores = [v.score for v in verdicts]
        return cls(
            verdicts=verdicts,
            failures=failures,
            score=round(sum(scores) / len(scores), 6),
            agreement=agreement(scores),
        )


def agreement(scores: list[float]) -> float | None:
    """The share of pairs of scores that are equal; None with fewer than two scores."""
    pairs = list(combinations(scores, 2))
    if not pairs:
        return None
    return round(sum(a == b for a, b in pairs) / len(pairs), 6)


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every complete top-level JSON object in ``text``, in order; never raises.

    Decodes from each ``{`` in turn and, after an object, goes on after its end, so an object
    nested inside another is part of it, and a brace inside a JSON string is part of the string.
    """
    found: list[dict[str, Any]] = []
    start = text.find("{")
    while start != -1:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            value, end = None, start + 1
        if isinstance(value, dict):
            found.append(value)
        else:
            end = start + 1
        start = text.find("{", end)
    return found


def parse_verdict(text: str | None, candidate: str = "") -> tuple[VerdictAnswer | None, str | None]:
    """(the verdict, None) when ``text`` holds exactly one, else (None, what was wrong).

    ``candidate`` is the answer being judged: an object in the reply that is also in it is a
    quotation, not the judge's verdict.
    """
    if not text or not text.strip():
        return None, "the answer was empty"
    objects = json_objects(text)
    if not objects:
        return None, "no JSON object was found in the answer"
    quoted = json_objects(candidate) if "{" in candidate else []
    verdicts: list[VerdictAnswer] = []
    problems: list[str] = []
    quotes = 0
    for found in objects:
        if found in quoted:
            quotes += 1
            continue
        try:
            verdicts.append(VerdictAnswer.model_validate(found))
        except ValidationError as error:
            problems.append(_problems(error))
    distinct = {(v.score, v.reason) for v in verdicts}
    if len(distinct) == 1:
        return verdicts[0], None
    if len(distinct) > 1:
        return None, "the answer holds more than one verdict; give exactly one"
    if quotes and not problems:
        return None, (
            "the only JSON object in the answer is copied from the answer being judged; "
            "give your own verdict"
        )
    return None, problems[0]


def _problems(error: ValidationError) -> str:
    """One line per field, e.g. ``score: must be one of 1, 0.66, 0.33, 0 (got 0.5)``."""
    lines = []
    for problem in error.errors():
        field = ".".join(str(part) for part in problem["loc"]) or "answer"
        message = problem["msg"].removeprefix("Value error, ")
        lines.append(f"{field}: {message}")
    return "; ".join(lines)
