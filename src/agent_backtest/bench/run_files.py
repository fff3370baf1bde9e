"""The record logs of a bench run directory: episodes.jsonl, appended as episodes end, and
grades.jsonl, written once grading ends. Both are ``runs.record_log`` logs keyed by (case,
rollout): a torn last line (a killed writer's) is left out, and the first record of a key wins."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from agent_backtest.bench.models import EpisodeRecord, GradeRecord
from agent_backtest.bench.run_manifest import EPISODES_FILE, GRADES_FILE
from agent_backtest.runs.record_log import RecordLog

CaseRecord = TypeVar("CaseRecord", EpisodeRecord, GradeRecord)


def episodes_log(directory: Path) -> RecordLog[EpisodeRecord]:
    """episodes.jsonl of the run in ``directory``."""
    return _case_log(directory / EPISODES_FILE, EpisodeRecord, "an episode")


def grades_log(directory: Path) -> RecordLog[GradeRecord]:
    """grades.jsonl of the run in ``directory``."""
    return _case_log(directory / GRADES_FILE, GradeRecord, "a GradeRecord")


def _case_log(path: Path, model: type[CaseRecord], what: str) -> RecordLog[CaseRecord]:
    """A log of ``model`` records keyed by (case, rollout); a broken line reads "not ``what``"."""
    return RecordLog(
        path,
        model,
        lambda record: record.key,
        broken=lambda detail: f"not {what}: {detail}",
        line=record_line,
    )


def read_episodes(directory: Path) -> list[EpisodeRecord]:
    """The run's episode records in file order, one per (case, rollout)."""
    return list(episodes_log(directory).read())


def settle_episodes(directory: Path) -> list[EpisodeRecord]:
    """The run's episode records, with episodes.jsonl rewritten to hold exactly them."""
    return episodes_log(directory).settle()


def record_line(record: EpisodeRecord | GradeRecord) -> bytes:
    """A record's line: every field, None too (a missing token count stays visible as null)."""
    return record.model_dump_json(by_alias=True).encode()
