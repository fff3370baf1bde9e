"""The direct reading of plain messages gives what the general message reader gives."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from agent_backtest.errors import RecordError
from agent_backtest.formats import messages
from agent_backtest.formats.messages import read_message
from tests.conftest import FIXTURES

GENAI_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages")
SHAPES: list[Any] = [
    {"role": "user", "parts": [{"type": "text", "content": "Find me a flight."}]},
    {"role": "user", "content": "Find me a flight."},
    {"role": "user", "content": ""},
    {"role": "assistant", "content": None},
    {"role": "system", "parts": []},
    {"role": "developer", "parts": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    {
        "role": "assistant",
        "finish_reason": "tool_call",
        "parts": [
            {"type": "text", "content": "Searching."},
            {"type": "tool_call", "id": "c1", "name": "search", "arguments": {"q": "DEN"}},
            {"type": "tool_call", "id": "c2", "name": "search", "arguments": "not json"},
        ],
    },
    # shapes the general reader takes: a name, a tool message, a Gemini part, a text item
    {"role": "user", "name": "ana", "content": "hi"},
    {"role": "tool", "parts": [{"type": "text", "content": "42"}]},
    {"role": "model", "parts": [{"text": "hi"}]},
    {"role": "user", "content": ["hi", {"type": "text", "text": "there"}]},
    {"role": "user", "content": {"text": "a structured payload"}},
]
MALFORMED: list[Any] = [
    {"role": "user", "parts": [{"type": "text", "content": 3}]},
    {"role": "assistant", "parts": [{"type": "tool_call", "arguments": {}}]},
    {"role": "user", "parts": [7]},
]


def recorded_messages() -> list[Any]:
    """Every GenAI message the OTLP fixtures record as ``gen_ai.*.messages``."""
    paths = [FIXTURES / "otlp" / "current.json", *(FIXTURES / "frameworks" / "otlp").glob("*.json")]
    found: list[Any] = []
    for path in paths:
        _collect(orjson.loads(path.read_bytes()), found)
    return found


def _collect(value: Any, found: list[Any]) -> None:
    if isinstance(value, dict):
        if value.get("key") in GENAI_KEYS and isinstance(value.get("value"), dict):
            text = value["value"].get("stringValue")
            listed = orjson.loads(text) if isinstance(text, str) else []
            found.extend(listed if isinstance(listed, list) else [])
        for child in value.values():
            _collect(child, found)
    elif isinstance(value, list):
        for child in value:
            _collect(child, found)


def read_generally(raw: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """What the general reader alone makes of a message: its messages, or its error."""
    with monkeypatch.context() as patched:
        patched.setattr(messages, "_plain_message", lambda raw: None)
        return outcome(raw)


def outcome(raw: Any) -> Any:
    try:
        return read_message(raw)
    except RecordError as error:
        return (error.reason, error.detail)


def test_the_fixtures_record_plain_messages() -> None:
    plain = [raw for raw in recorded_messages() if messages._plain_message(raw) is not None]
    assert len(plain) >= 5


@pytest.mark.parametrize("raw", [*SHAPES, *MALFORMED, *recorded_messages()])
def test_a_message_reads_the_same_directly_and_generally(
    raw: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert outcome(raw) == read_generally(raw, monkeypatch)
