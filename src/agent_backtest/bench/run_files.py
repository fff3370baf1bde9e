"""episodes.jsonl of a bench run directory: appended as episodes end, read back with a killed
writer's torn last line left out."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ValidationError

from agent_backtest.bench.models import EpisodeRecord
from agent_backtest.bench.run_manifest import EPISODES_FILE
from agent_backtest.errors import InputError
from agent_backtest.runs.files import private_atomic_writer


def read_episodes(directory: Path) -> list[EpisodeRecord]:
    """The run's episode records in file order, one per (case, rollout); a torn last line (a
    killed writer's) is left out."""
    path = directory / EPISODES_FILE
    if not path.exists():
        return []
    lines = path.read_bytes().split(b"\n")
    records: dict[tuple[str, int], EpisodeRecord] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = EpisodeRecord.model_validate_json(line)
        except ValidationError as exc:
            if number == len(lines):  # the last line, never ended by a newline: torn
                continue
            raise InputError(
                path, f"line {number}", f"not an episode: {exc.errors()[0]['msg']}"
            ) from None
        records.setdefault(record.key, record)
    return list(records.values())


def settle_episodes(directory: Path) -> list[EpisodeRecord]:
    """The run's episode records, with episodes.jsonl rewritten to hold exactly them."""
    records = read_episodes(directory)
    if (directory / EPISODES_FILE).exists():
        with private_atomic_writer(directory / EPISODES_FILE) as handle:
            for record in records:
                handle.write(record_line(record))
    return records


class EpisodeFile:
    """episodes.jsonl opened for appending (0600): each record is on disk when append returns."""

    def __init__(self, path: Path) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self.handle = os.fdopen(fd, "ab")

    def append(self, record: EpisodeRecord) -> None:
        self.handle.write(record_line(record))
        self.handle.flush()
        os.fsync(self.handle.fileno())

    def close(self) -> None:
        self.handle.close()


def record_line(record: EpisodeRecord) -> bytes:
    # every field, None too: a missing token count stays visible as null
    return record.model_dump_json(by_alias=True).encode() + b"\n"
