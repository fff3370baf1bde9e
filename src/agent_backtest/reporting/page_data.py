"""The unit data a report page carries: units, (unit, repeat) rows and a message table.

A session's requests repeat its earlier messages (and every request repeats the system prompt),
so each distinct message is stored once and a unit's context is a list of indexes into the
table. That keeps a 10,000-unit page a few megabytes instead of gigabytes.

The three tables are written as they are built, each to an unnamed temporary file, as the JSON
the page embeds; memory keeps only the message index and the counts the page's top shows.
A value shaped like a credential (a key pasted into a message) is masked unless asked for.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterator
from typing import IO, Any

from agent_backtest.redaction import mask_secrets
from agent_backtest.reporting.answers import answer_data
from agent_backtest.reporting.markup import script_json
from agent_backtest.runs import ResultRecord
from agent_backtest.runs.scores import ScoreRecord
from agent_backtest.trace import Message, canonical_json
from agent_backtest.units import Unit

TABLES = ("abt-units", "abt-rows", "abt-messages")  # the ids of the page's JSON blocks


class _Table:
    """One JSON array written an item at a time to an unnamed temporary file (mode 0600)."""

    def __init__(self, show_secrets: bool = False) -> None:
        self.file: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 -- closed by close()
        self.count = 0
        self.show_secrets = show_secrets

    def append(self, item: dict[str, Any]) -> None:
        """Write one item, escaped for a <script> block as :func:`script_json` escapes, values
        shaped like credentials masked unless they are to be shown."""
        self.file.write(b"," if self.count else b"[")
        text = script_json(item)
        self.file.write((text if self.show_secrets else mask_secrets(text)).encode())
        self.count += 1

    def chunks(self) -> Iterator[bytes]:
        """The array's JSON text, a chunk at a time."""
        if not self.count:
            yield b"[]"
            return
        self.file.seek(0)
        while chunk := self.file.read(1 << 20):
            yield chunk
        yield b"]"

    def close(self) -> None:
        """Close (and so remove) the file."""
        self.file.close()


class PageData:
    """What the page script renders: built in one pass over the run, a (unit, repeat) at a
    time, the rows of one unit together."""

    def __init__(self, show_secrets: bool = False) -> None:
        self.tables = {name: _Table(show_secrets) for name in TABLES}
        self.reconstructed = 0
        self.tools_missing = 0
        self.recorded_models: set[str] = set()
        self._message_index: dict[bytes, int] = {}
        self._unit: tuple[str, int] | None = None  # the unit being added, and its index

    def add(self, unit: Unit | None, score: ScoreRecord, result: ResultRecord | None) -> None:
        """Add one (unit, repeat): its unit the first time it is seen, then its row."""
        units = self.tables["abt-units"]
        if self._unit is None or self._unit[0] != score.unit_id:
            self._unit = score.unit_id, units.count
            units.append(self._unit_data(unit, score))
        self.tables["abt-rows"].append(row_data(self._unit[1], score, result))

    def blocks(self) -> Iterator[tuple[str, Iterator[bytes]]]:
        """Each JSON block of the page: its id and its text."""
        for name, table in self.tables.items():
            yield name, table.chunks()

    def close(self) -> None:
        """Remove the temporary files."""
        for table in self.tables.values():
            table.close()

    def _unit_data(self, unit: Unit | None, score: ScoreRecord) -> dict[str, Any]:
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
            messages = self.tables["abt-messages"]
            index = self._message_index[key] = messages.count
            data = answer_data(message) or {}
            messages.append(
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
