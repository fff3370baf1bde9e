"""A scored replay run's verdict per unit, with the production span the unit came from: what a
push writes back to the backend that holds the production trace.

A unit replayed ``k`` times has ``k`` score records; its verdict is their most frequent bucket
(the earliest repeat's among equals), the mean of their agreement scores, and the candidate's
first answer in short. Units whose every repeat ended without a decision (an infrastructure or
judge error, no judge) have no verdict and are counted by status.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from agent_backtest.errors import InputError
from agent_backtest.runs import RunDirectory, ScoreRecord, read_results
from agent_backtest.trace import LLMResponse

ANSWER_CHARS = 160
SPAN_ID = re.compile(r"^[0-9a-f]{16}$")


@dataclass(frozen=True)
class UnitVerdict:
    """One unit's verdict, ready to be written next to its production span."""

    unit_id: str
    span_id: str
    bucket: str
    score: float | None
    repeats: int
    agreeing: int
    answer: str

    @property
    def explanation(self) -> str:
        """The candidate's answer in short, and how many repeats agreed on the bucket."""
        agreed = f" ({self.agreeing} of {self.repeats} repeats)" if self.repeats > 1 else ""
        return f"{self.bucket}{agreed}; candidate: {self.answer}"


@dataclass
class RunVerdicts:
    """A run's verdicts, and the units left without one, by reason."""

    run_id: str
    candidate: str
    verdicts: list[UnitVerdict] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)


def run_verdicts(path: Path) -> RunVerdicts:
    """The verdicts of the scored replay run at ``path``."""
    run = RunDirectory(path)
    manifest = run.load_manifest()
    if not run.is_scored():
        raise InputError(path, None, f"is not scored yet: abt score {path}")
    candidate = manifest.roles["candidate"].model if "candidate" in manifest.roles else ""
    verdicts = RunVerdicts(run_id=path.resolve().name, candidate=candidate)
    scores: dict[str, list[ScoreRecord]] = defaultdict(list)
    for record in run.read_scores():
        scores[record.unit_id].append(record)
    answers = _first_answers(run.results_path)
    for unit in run.read_units():
        records = sorted(scores.get(unit.unit_id, []), key=lambda record: record.repeat)
        decided = [r for r in records if r.status == "scored" and r.bucket is not None]
        if not decided:
            reason = records[0].status if records else "not_replayed"
            verdicts.left_out[reason] += 1
            continue
        if not SPAN_ID.match(unit.step_id):
            verdicts.left_out["no_span_id"] += 1
            continue
        buckets = Counter(r.bucket for r in decided)
        bucket = max(buckets, key=lambda b: (buckets[b], -_first_index(decided, b)))
        values = [r.score for r in decided if r.score is not None]
        verdicts.verdicts.append(
            UnitVerdict(
                unit_id=unit.unit_id,
                span_id=unit.step_id,
                bucket=str(bucket),
                score=sum(values) / len(values) if values else None,
                repeats=len(decided),
                agreeing=buckets[bucket],
                answer=answers.get(unit.unit_id, "no answer recorded"),
            )
        )
    return verdicts


def _first_index(records: list[ScoreRecord], bucket: str | None) -> int:
    return next(i for i, record in enumerate(records) if record.bucket == bucket)


def _first_answers(results: Path) -> dict[str, str]:
    """Each unit's answer of its lowest repeat, in short."""
    answers: dict[str, tuple[int, str]] = {}
    for result in read_results(results):
        if result.response is None:
            continue
        known = answers.get(result.unit_id)
        if known is None or result.repeat < known[0]:
            answers[result.unit_id] = (result.repeat, short_answer(result.response))
    return {unit: answer for unit, (_, answer) in answers.items()}


def short_answer(response: LLMResponse) -> str:
    """A model's answer on one short line: its tool calls with their arguments, else its text."""
    message = response.message
    if message.tool_calls:
        text = "; ".join(
            f"{call.name}({orjson.dumps(call.arguments).decode()})" for call in message.tool_calls
        )
    else:
        text = message.text()
    text = " ".join(text.split())
    return text if len(text) <= ANSWER_CHARS else text[: ANSWER_CHARS - 1] + "…"


def batches(items: list[UnitVerdict], size: int) -> Iterator[list[UnitVerdict]]:
    """``items`` in lists of at most ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
