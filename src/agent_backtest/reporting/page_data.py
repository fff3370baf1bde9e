"""The unit data a report page carries: units, (unit, repeat) rows and a message table.

A session's requests repeat its earlier messages (and every request repeats the system prompt),
so each distinct message is stored once and a unit's context is a list of indexes into the
table. That keeps a 10,000-unit page a few megabytes instead of gigabytes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from agent_backtest.reporting.answers import answer_data
from agent_backtest.reporting.loading import ScoredRun
from agent_backtest.runs import ResultRecord
from agent_backtest.runs.scores import ScoreRecord
from agent_backtest.trace import Message, canonical_json
from agent_backtest.units import Unit


@dataclass
class PageData:
    """What the page script renders: built in one pass over the run."""

    units: list[dict[str, Any]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    reconstructed: int = 0
    tools_missing: int = 0
    recorded_models: set[str] = field(default_factory=set)
    _message_index: dict[bytes, int] = field(default_factory=dict)
    _unit_index: dict[str, int] = field(default_factory=dict)

    def add(self, unit: Unit | None, score: ScoreRecord, result: ResultRecord | None) -> None:
        """Add one (unit, repeat): its unit the first time it is seen, then its row."""
        index = self._unit_index.get(score.unit_id)
        if index is None:
            index = self._unit_index[score.unit_id] = len(self.units)
            self.units.append(self._unit(unit, score))
        self.rows.append(row_data(index, score, result))

    def _unit(self, unit: Unit | None, score: ScoreRecord) -> dict[str, Any]:
        if unit is None:
            return {
                "id": score.unit_id,
                "session": score.session_id,
                "turn": None,
                "node": score.node,
                "kind": score.kind,
                "split": score.split,
                "ctx": [],
                "tools": [],
                "golden": None,
                "reconstructed": False,
                "model": None,
            }
        self.reconstructed += unit.reconstructed
        self.tools_missing += unit.tools_missing
        if unit.recorded_model:
            self.recorded_models.add(unit.recorded_model)
        return {
            "id": unit.unit_id,
            "session": unit.session_id,
            "turn": unit.turn_index,
            "node": unit.node,
            "kind": unit.kind,
            "split": unit.split,
            "ctx": [self._message(m) for m in unit.request.messages],
            "tools": [tool.name for tool in unit.request.tools or []],
            "golden": answer_data(unit.golden.message),
            "reconstructed": unit.reconstructed,
            "model": unit.recorded_model,
        }

    def _message(self, message: Message) -> int:
        # a digest, not the text: the index would otherwise hold every distinct message twice
        key = hashlib.blake2b(
            canonical_json(message.model_dump(mode="json", exclude_none=True)), digest_size=16
        ).digest()
        index = self._message_index.get(key)
        if index is None:
            index = self._message_index[key] = len(self.messages)
            data = answer_data(message) or {}
            self.messages.append(
                {
                    "role": message.role,
                    "name": message.name,
                    "tool_call_id": message.tool_call_id,
                    **data,
                }
            )
        return index


def row_data(unit_index: int, score: ScoreRecord, result: ResultRecord | None) -> dict[str, Any]:
    """One (unit, repeat) as the page shows it."""
    response = result.response if result else None
    usage = response.usage if response else None
    return {
        "u": unit_index,
        "repeat": score.repeat,
        "status": score.status,
        "bucket": score.bucket,
        "strict": score.strict,
        "score": score.score,
        "method": score.method,
        "candidate_tool": score.candidate_tool,
        "candidate": answer_data(response.message) if response else None,
        "diffs": [d.model_dump(mode="json") for d in score.differences],
        "judged": [
            j.model_dump(
                mode="json",
                include={"target", "score", "reasons", "judge", "agreement", "unscored_reason"},
            )
            for j in score.judged
        ],
        "similarity": score.similarity,
        "error_kind": score.error_kind,
        "error": result.error.detail if result and result.error else None,
        "unscored_reason": score.unscored_reason,
        "missing_calls": score.missing_calls,
        "extra_calls": score.extra_calls,
        "latency_ms": result.latency_ms if result else None,
        "cache_hit": result.cache_hit if result else None,
        "output_tokens": usage.output_tokens if usage else None,
    }


def page_data(run: ScoredRun) -> PageData:
    """The page data of a whole run."""
    data = PageData()
    for unit, score, result in run.joined():
        data.add(unit, score, result)
    return data
