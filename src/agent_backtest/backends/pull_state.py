"""Where a pull stands, saved next to its output (``FILE.pull.json``) after every page, so an
interrupted pull resumes where it stopped.

The state records how many bytes of the output were whole when it was saved: a resume cuts the
output back to that length before it appends, so a page written but not yet recorded is not
written twice.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_backtest.errors import InputError, UserError
from agent_backtest.runs.files import private_atomic_writer

STATE_SUFFIX = ".pull.json"


class PullState(BaseModel):
    """How far a pull from one source got."""

    model_config = ConfigDict(extra="forbid")

    source: dict[str, Any] = Field(
        description="What is pulled: service, endpoint, project or window; a resume must match."
    )
    position: Any = Field(default=None, description="The next page: a cursor or a page number.")
    written_bytes: int = Field(default=0, description="Bytes of the output that are whole.")
    records: int = Field(default=0, description="Spans or traces written so far.")
    complete: bool = Field(default=False, description="Every page was written.")


def state_path(out: Path) -> Path:
    """Where the state of a pull into ``out`` is kept."""
    return out.with_name(out.name + STATE_SUFFIX)


def saved(out: Path) -> PullState | None:
    """The saved state of a pull into ``out``, or None when there is none."""
    path = state_path(out)
    if not path.exists():
        return None
    try:
        return PullState.model_validate(orjson.loads(path.read_bytes()))
    except (orjson.JSONDecodeError, ValidationError):
        raise InputError(path, None, "is not a pull state: remove it and pull again") from None


def start(out: Path, source: dict[str, Any], parameter: str = "output") -> PullState:
    """The state to continue from: a fresh one for a new output, the saved one for an
    unfinished pull of the same source (the output cut back to its whole part)."""
    state = saved(out)
    if state is None:
        if out.exists() and out.stat().st_size > 0:
            raise UserError(
                f"{out} exists and was not written by an unfinished pull: remove it or name "
                "another file",
                parameter,
            )
        return PullState(source=source)
    if state.source != source:
        raise UserError(
            f"{out} holds a pull of another source ({_described(state.source)}): remove it "
            f"and {state_path(out).name}, or name another file",
            parameter,
        )
    if out.exists() and out.stat().st_size > state.written_bytes:
        os.truncate(out, state.written_bytes)
    return state


def save(out: Path, state: PullState) -> None:
    """Record ``state`` (atomically, mode 0600)."""
    with private_atomic_writer(state_path(out)) as handle:
        handle.write(orjson.dumps(state.model_dump(), option=orjson.OPT_SORT_KEYS))


def _described(source: dict[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in sorted(source.items()) if value)
