"""``simulate_traces()``: the agent's own exported traces joined to a simulate run's
conversations, written as canonical sessions whose model calls ``abt replay`` can backtest."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_backtest.api.options import PathLike, ReadingOptions
from agent_backtest.api.units import read_sessions
from agent_backtest.errors import UserError
from agent_backtest.formats import InputSummary
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.runs.lock import run_lock
from agent_backtest.simulate.judging import read_run
from agent_backtest.simulate.layout import AGENT_SESSIONS
from agent_backtest.simulate.trace_join import JoinedTraces, join_traces
from agent_backtest.trace import dump_record

__all__ = ["JoinedTraces", "TracesWritten", "simulate_traces"]


@dataclass(frozen=True)
class TracesWritten:
    """What the join found and where the sessions were written."""

    path: Path
    joined: JoinedTraces
    inputs: list[InputSummary]
    """Per trace file: what it held and what was skipped."""


def simulate_traces(
    run: PathLike,
    traces: PathLike | Sequence[PathLike],
    *,
    out: PathLike | None = None,
    reading: ReadingOptions | None = None,
) -> TracesWritten:
    """Read the agent's own ``traces`` (any format ``ingest`` reads), keep the sessions that
    belong to the conversations of the simulate run ``run`` (by the trace id of a turn's
    ``traceparent``, else the agent's session id), and write them, one per conversation and
    named by its flow's id, as canonical JSONL to ``out`` (default: ``agent_sessions.jsonl``
    in the run). Traces that match no conversation are a user error: nothing is written.
    """
    path = Path(run)
    if not path.is_dir():
        raise UserError(f"{path} is not a run directory", "run")
    _, conversations = read_run(path)
    if not conversations:
        raise UserError(f"{path} has no recorded conversation to join traces to", "run")
    target = Path(out) if out is not None else path / AGENT_SESSIONS
    stream = read_sessions(traces, reading)
    joined = join_traces(path.name, conversations.values(), stream)
    if not joined.joined:
        raise UserError(
            f"none of the {joined.read} sessions read belongs to a conversation of {path}: the "
            "agent must continue the traceparent each turn carries, or record its session id",
            "traces",
        )
    with run_lock(path, "join traces to"), private_atomic_writer(target) as handle:
        handle.writelines(dump_record(session) + b"\n" for session in joined.sessions)
    return TracesWritten(target, joined, list(stream.summaries))
