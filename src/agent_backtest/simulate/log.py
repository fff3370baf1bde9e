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

from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.runs.record_log import RecordLog
from agent_backtest.simulate.layout import CONVERSATIONS, SESSIONS
from agent_backtest.simulate.models import ConversationRecord
from agent_backtest.simulate.sessions import conversation_session
from agent_backtest.trace import dump_record


def conversations_log(path: Path) -> RecordLog[ConversationRecord]:
    """A conversations file as a record log: one record per flow, the first one wins."""
    return RecordLog(
        path,
        ConversationRecord,
        lambda record: record.flow_id,
        broken=lambda detail: f"not a ConversationRecord record: {detail}",
    )


def read_conversations(path: Path) -> list[ConversationRecord]:
    """The whole records of a conversations file, the first of each flow; a torn last line
    (a killed writer) is left out, a broken line elsewhere is an error naming it."""
    return list(conversations_log(path).read())


def rewrite(run: Path, records: Iterable[ConversationRecord]) -> None:
    """Both files rewritten (atomically) with exactly ``records``."""
    kept = list(records)
    conversations_log(run / CONVERSATIONS).rewrite(kept)
    with private_atomic_writer(run / SESSIONS) as handle:
        for line, record in enumerate(kept, start=1):
            handle.write(dump_record(conversation_session(record, line)) + b"\n")


class ConversationLog:
    """Appends each finished conversation and its session (files mode 0600)."""

    def __init__(self, run: Path, lines: int) -> None:
        self.lines = lines
        self._conversations = conversations_log(run / CONVERSATIONS).open(sync=True)
        self._sessions = _append(run / SESSIONS)

    def append(self, record: ConversationRecord) -> None:
        """Write the conversation, then its session; once this returns a kill loses neither."""
        self.lines += 1
        self._conversations.append(record)
        self._sessions.write(dump_record(conversation_session(record, self.lines)) + b"\n")
        self._sessions.flush()

    def close(self) -> None:
        """Close both files."""
        self._conversations.close()
        self._sessions.close()


def _append(path: Path) -> BinaryIO:
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")
