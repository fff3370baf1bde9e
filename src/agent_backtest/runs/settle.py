"""How a run's final status is decided and saved, the same for every job.

A run that stopped early (a signal, a crash, a failure of the run itself) ends with that status.
A run that went through its work is ``completed`` when none of its records is an error,
``failed`` when every one is, and ``completed_with_errors`` in between. The records are a job's
own (replay's results, simulate's conversations, bench's episodes); an error is one the job
counts as such (an infrastructure error, a transport error, an engineering error).
"""

from __future__ import annotations

from pathlib import Path

from agent_backtest.runs.manifest_base import ManifestBase, RunStatus, now


def final_status(records: int, errors: int) -> RunStatus:
    """The status of a run that went through its work: ``records`` recorded, ``errors`` of
    them errors."""
    if records and errors == records:
        return "failed"
    if errors:
        return "completed_with_errors"
    return "completed"


def settle(
    manifest: ManifestBase,
    path: Path,
    ended: RunStatus | None,
    records: int,
    errors: int,
) -> None:
    """Give the run its status (``ended`` when it stopped so, else :func:`final_status`) and
    its end time (none while ``running``), and save run.json at ``path``."""
    manifest.status = ended if ended is not None else final_status(records, errors)
    manifest.finished_at = None if manifest.status == "running" else now()
    manifest.save(path)
