"""``scores.jsonl``: one score record per (unit, repeat) of a run, from ``abt score``.

Every answer gets one status. ``scored``: decided, by the matcher, by the judge or by exact text
equality. ``no_judge``: a text answer (or a call differing only in free text) that only a judge
could decide, when none was configured; it carries a text similarity, never a verdict.
``unscored``: the judge answered but gave no valid verdict. ``infra_error``: the candidate's call
gave no answer. ``judge_error``: the judge could not be asked (its calls failed after retries), an
infrastructure error of the judge's, with its kind (``judge_http_5xx``, ``judge_timeout``, …). Only
decided answers enter agreement; the others are counted beside it, never as zeros.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal

import orjson
from pydantic import Field, ValidationError

from agent_backtest.errors import InputError
from agent_backtest.input_files import open_binary
from agent_backtest.record_model import StrictModel, schema_tag
from agent_backtest.runs.offsets import UnitOffsets, unit_key
from agent_backtest.runs.records import AnswerRecord

SCORE_SCHEMA = "abt.score/1"

Bucket = Literal[
    "match",
    "match_equivalent",
    "wrong_tool",
    "args_mismatch",
    "text_instead_of_tool",
    "tool_instead_of_text",
    "text_match",
    "text_mismatch",
    "missing_call",
    "extra_call",
    "unscored",
    "text_not_judged",
    "removed_tool_called_in_golden",
    "unsatisfiable_key",
]
Status = Literal["scored", "no_judge", "unscored", "infra_error", "judge_error"]
JUDGE_ERROR_PREFIX = "judge_"
"""Prefixed to a provider error kind for a judge's failed call, so the candidate's ``http_5xx``
and the judge's ``judge_http_5xx`` are told apart wherever kinds are listed together."""
Method = Literal["matcher", "judge", "exact_text"]


class ArgumentDifference(StrictModel):
    """Where a candidate's call arguments differ from production's."""

    call: int = Field(description="Index of the golden call.")
    path: str
    kind: str
    golden: Any = None
    candidate: Any = None
    required: bool = False


class JudgeSummary(StrictModel):
    """What the judge said about one text answer or free-text argument."""

    target: str = Field(description="'text', or 'call N argument NAME'.")
    score: float | None = Field(default=None, description="The verdict; None when unscored.")
    reasons: list[str] = Field(default_factory=list)
    judge: str | None = None
    prompt: str | None = None
    prompt_sha256: str | None = None
    agreement: float | None = None
    unscored_reason: str | None = None


class ScoreRecord(AnswerRecord):
    """How one candidate answer compares with production's."""

    schema_: Literal["abt.score/1"] = schema_tag(SCORE_SCHEMA)
    node: str | None = None
    kind: str
    split: str | None = None
    agent_version: str | None = Field(
        default=None, description="The agent version that served the step in production."
    )
    model: str = Field(description="The candidate provider/model.")
    golden_tool: str | None = Field(
        default=None, description="Production's (first) tool, or None for a text answer."
    )
    candidate_tool: str | None = None
    status: Status = Field(
        description="scored (decided), no_judge, unscored, infra_error (the candidate's call "
        "failed) or judge_error (the judge's calls failed)."
    )
    bucket: Bucket | None = Field(
        default=None, description="None for infrastructure errors, the candidate's or the judge's."
    )
    strict: bool | None = Field(
        default=None,
        description="Same tool and every argument exact (or the same text); None when not scored.",
    )
    score: float | None = Field(
        default=None, description="Lenient agreement in [0, 1]; set only on decided answers."
    )
    method: Method | None = Field(
        default=None, description="What decided the answer: matcher, judge or exact_text."
    )
    topic_match: bool | None = Field(default=None, description="Router units: same target.")
    differences: list[ArgumentDifference] = Field(default_factory=list)
    missing_calls: int = 0
    extra_calls: int = 0
    judged: list[JudgeSummary] = Field(default_factory=list)
    similarity: float | None = Field(
        default=None,
        description="Token-overlap similarity of an answer no judge decided (not a verdict).",
    )
    suspected_injection: list[str] = Field(
        default_factory=list,
        description="Signs that the candidate's text speaks to the judge (a verdict-shaped "
        "object, 'ignore previous instructions', 'score 1'); empty when none.",
    )
    input_tokens_ratio: float | None = Field(
        default=None,
        description="The candidate's reported prompt tokens over production's for the same "
        "request, when both were recorded: far below 1, the endpoint may be dropping the tools.",
    )
    reason: str | None = Field(
        default=None,
        description="Why the bucket was given, where it needs saying: for match_equivalent, "
        "the tool called and production's tool.",
    )
    error_kind: str | None = Field(
        default=None,
        description="Why an infrastructure error left the answer undecided: the candidate's call's "
        "kind (http_429, timeout, …), or the judge's prefixed with judge_ (judge_http_5xx, …).",
    )
    unscored_reason: str | None = Field(
        default=None,
        description="Why the answer is unscored, or the judge's failure behind a judge_error.",
    )
    answer_signature: str | None = Field(
        default=None, description="Hash of the candidate's normalised answer, to compare repeats."
    )
    scorer: str = Field(description="Scorer name and version.")
    scoring_id: str = Field(description="Hash of the scoring settings that produced this record.")


def read_scores(path: Path) -> Iterator[ScoreRecord]:
    """The score records of ``scores.jsonl`` (written atomically, so never torn)."""
    with open_binary(path, "run file") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield ScoreRecord.model_validate(orjson.loads(line))
            except (orjson.JSONDecodeError, ValidationError):
                raise _not_a_score(path, number) from None


class ScoreIndex:
    """Where each score record starts in ``scores.jsonl``, by unit: a report can then take a
    unit's scores as it reaches the unit without holding the others.

    Building it reads each line as JSON only; a record is validated when it is read.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offsets = UnitOffsets()
        self._handle: BinaryIO | None = None
        offset = 0
        with open_binary(path, "run file") as handle:
            for number, line in enumerate(handle, start=1):
                start, offset = offset, offset + len(line)
                if not line.strip():
                    continue
                try:
                    data = orjson.loads(line)
                    self.offsets.add(str(data["unit_id"]), int(data["repeat"]), start)
                except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                    raise _not_a_score(path, number) from None

    def take(self, unit_id: str) -> list[ScoreRecord]:
        """The scores of ``unit_id`` by repeat, read from the file; they are not kept here."""
        return self.take_key(unit_key(unit_id))

    def take_key(self, key: bytes) -> list[ScoreRecord]:
        """:meth:`take` of the unit known by ``key``."""
        return [self._read(offset) for _, offset in self.offsets.pop(key)]

    def _read(self, offset: int) -> ScoreRecord:
        if self._handle is None:
            self._handle = open_binary(self.path, "run file")
        self._handle.seek(offset)
        line = self._handle.readline()
        try:
            return ScoreRecord.model_validate(orjson.loads(line))
        except (orjson.JSONDecodeError, ValidationError):
            self._handle.seek(0)
            raise _not_a_score(self.path, self._handle.read(offset).count(b"\n") + 1) from None

    def close(self) -> None:
        """Close the file, if a record was read."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _not_a_score(path: Path, number: int) -> InputError:
    return InputError(
        path, f"line {number}", "not a score record; score the run again with abt score"
    )
