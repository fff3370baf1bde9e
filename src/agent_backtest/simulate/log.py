"""``conversations.jsonl`` and ``sessions.jsonl``: appended as each conversation ends.

Each conversation is written and flushed before the next line, its canonical session right
after it; a kill can tear only the last line, which reading leaves out. A resume rewrites
both files clean from the whole conversation records (the first of each flow), so a flow
whose conversation was recorded is never played again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

import orjson
from pydantic import ValidationError

from agent_backtest.errors import InputError
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.simulate.layout import CONVERSATIONS, SESSIONS
from agent_backtest.simulate.models import ConversationRecord
from agent_backtest.simulate.sessions import conversation_session
from agent_backtest.trace import dump_record


def read_conversations(path: Path) -> list[ConversationRecord]:
    """The whole records of a conversations file, the first of each flow; a torn last line
    (a killed writer) is left out, a broken line elsewhere is an error naming it."""
    if not path.exists():
        return []
    lines = path.read_bytes().split(b"\n")
    records: dict[str, ConversationRecord] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = ConversationRecord.model_validate(orjson.loads(line))
        except (orjson.JSONDecodeError, ValidationError):
            if number == len(lines):  # no newline after it: the write was cut
                continue
            raise InputError(
                path, f"line {number}", "not a conversation record (the file was edited)"
            ) from None
        records.setdefault(record.flow_id, record)
    return list(records.values())


def rewrite(run: Path, records: Iterable[ConversationRecord]) -> None:
    """Both files rewritten (atomically) with exactly ``records``."""
    kept = list(records)
    with private_atomic_writer(run / CONVERSATIONS) as handle:
        handle.writelines(dump_record(record) + b"\n" for record in kept)
    with private_atomic_writer(run / SESSIONS) as handle:
        for line, record in enumerate(kept, start=1):
            handle.write(dump_record(conversation_session(record, line)) + b"\n")


class ConversationLog:
    """Appends each finished conversation and its session (files mode 0600)."""

    def __init__(self, run: Path, lines: int) -> None:
        self.lines = lines
        self._conversations = _append(run / CONVERSATIONS)
        self._sessions = _append(run / SESSIONS)

    def append(self, record: ConversationRecord) -> None:
        """Write the conversation, then its session; once this returns a kill loses neither."""
        self.lines += 1
        self._conversations.write(dump_record(record) + b"\n")
        self._conversations.flush()
        os.fsync(self._conversations.fileno())
        self._sessions.write(dump_record(conversation_session(record, self.lines)) + b"\n")
        self._sessions.flush()

    def close(self) -> None:
        """Close both files."""
        self._conversations.close()
        self._sessions.close()


def _append(path: Path) -> BinaryIO:
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")
