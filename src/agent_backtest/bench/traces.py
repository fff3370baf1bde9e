"""An episode as a canonical session, so ``abt units``, ``replay``, ``profile`` and ``show`` read
rollouts like any trace; and its transcript read back for grading.

The trace file holds one session as one JSON line (what the canonical JSONL reader takes), named
``traces/EPISODE.json``. Each agent call is an LLM step with its request as sent and the answer;
each tool call the environment ran is a tool step; each user message opens a turn. The whole
conversation as the agent last saw it, in the OpenAI chat format, is kept in the session's
metadata as ``transcript``: with ``first_tool_call_only`` the conversation holds fewer tool calls
than the answers did, so it cannot be rebuilt from the steps alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent_backtest.bench.episode import Episode
from agent_backtest.errors import InputError
from agent_backtest.input_files import read_bytes
from agent_backtest.trace import AgentInfo, Session, SourceRef, dump_record
from agent_backtest.trace.openai_wire import message_to_wire

TRACES_DIR = "traces"
TRACE_FORMAT = "abt_bench"


def trace_name(episode_id: str) -> str:
    """The trace's path, relative to the run directory."""
    return f"{TRACES_DIR}/{episode_id}.json"


def transcript(episode: Episode) -> list[dict[str, Any]]:
    """The episode's conversation in the OpenAI chat format."""
    return [message_to_wire(message) for message in episode.messages]


def episode_session(episode: Episode, benchmark: str) -> Session:
    """The canonical session of an episode."""
    rollout = episode.rollout
    return Session(
        id=rollout.episode_id,
        source=SourceRef(file=trace_name(rollout.episode_id), format=TRACE_FORMAT),
        agent=AgentInfo(name=benchmark),
        turns=episode.turns,
        metadata={
            "benchmark": benchmark,
            "case_id": rollout.case.id,
            "rollout": rollout.rollout,
            "seed": rollout.seed,
            "prompt_group": rollout.prompt_group,
            "ended_by": episode.ended_by,
            "transcript": transcript(episode),
        },
    )


def session_bytes(session: Session) -> bytes:
    """The trace file's content: the session on one line."""
    return dump_record(session) + b"\n"


def read_transcript(path: Path) -> list[dict[str, Any]]:
    """The conversation kept in a trace file written by :func:`session_bytes`."""
    try:
        session = Session.model_validate_json(read_bytes(path, "episode's trace"))
    except ValidationError as exc:
        raise InputError(path, None, f"not a session: {exc.errors()[0]['msg']}") from None
    messages = session.metadata.get("transcript")
    if not isinstance(messages, list):
        raise InputError(path, "metadata.transcript", "missing: not a trace of a bench episode")
    return messages
