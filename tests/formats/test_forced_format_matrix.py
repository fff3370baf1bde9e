"""Every format forced on a recording of every other format stops with one line that says what
the format expects and what the file is, whether its reader finds nothing in the file or cannot
parse it at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_backtest.errors import InputError
from agent_backtest.formats import ReadOptions, SessionStream
from agent_backtest.formats.registry import READERS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# One real recording of each built-in format.
RECORDINGS = {
    "canonical": FIXTURES / "canonical" / "sessions.jsonl",
    "otlp": FIXTURES / "frameworks" / "otlp" / "genai-vertexai-function-call.trace.json",
    "langfuse": FIXTURES / "frameworks" / "langfuse" / "agno-2025-06-11.trace.json",
    "inspect": FIXTURES / "frameworks" / "inspect" / "azureai-llama-epochs-0.3.42.eval",
    "tau2_bench": FIXTURES / "frameworks" / "tau2" / "hotel-gemma-3-27b.json",
    "tau_bench": FIXTURES / "tau_airline" / "two_trajectories.json",
    "session_steps": FIXTURES / "session_steps" / "example.json",
    "openhands": FIXTURES / "frameworks" / "openhands" / "gpt-4o-basic-interactions.json",
    "swe_agent": FIXTURES / "frameworks" / "swe_agent" / "gpt-4o-function-calling-1.x.traj",
    "chat_log": FIXTURES / "chat_log" / "example.jsonl",
    "cassette": FIXTURES / "cassette" / "agents" / "openllmetry_langchain_agent_streaming.yaml",
}
PAIRS = [(forced, held) for forced in RECORDINGS for held in RECORDINGS if forced != held]


def test_every_built_in_format_has_a_recording_here() -> None:
    assert sorted(RECORDINGS) == sorted(READERS.built_in_names())


@pytest.mark.parametrize(("forced", "held"), PAIRS, ids=[f"{f}-on-{h}" for f, h in PAIRS])
def test_a_forced_format_names_what_the_file_is(forced: str, held: str) -> None:
    path = RECORDINGS[held]
    with pytest.raises(InputError) as caught:
        list(SessionStream([path], ReadOptions(), forced))
    message = str(caught.value)
    assert message.startswith(f"{path}: --format {forced}: expects ")
    assert message.endswith(
        f"the file looks like {held}: leave out --format or pass --format {held}"
    )
    assert "\n" not in message


@pytest.mark.parametrize("held", sorted(RECORDINGS))
def test_the_right_format_forced_reads_the_file(held: str) -> None:
    assert list(SessionStream([RECORDINGS[held]], ReadOptions(), held))
