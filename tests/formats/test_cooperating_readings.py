"""A span carrying the current GenAI attributes beside OpenLLMetry's legacy ones is read whole.

Newer LiteLLM releases write ``gen_ai.input.messages`` and ``gen_ai.output.messages`` next to
the indexed ``gen_ai.prompt.*``/``gen_ai.completion.*`` and ``llm.request.functions.*`` they
always wrote, and the current output list can be empty while the answer sits under
``gen_ai.completion.N.function_call.*``. The spans below are LiteLLM's own export (see
``tests/fixtures/frameworks/otlp/PROVENANCE.md``) with the current attributes added as that
convention writes them; each reading alone misses part of the call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.formats import otlp
from agent_backtest.formats.base import ReadOptions, SkipLog
from agent_backtest.trace import LLMCall
from tests.formats.conformance import read_sample
from tests.formats.otlp_json import any_value

OTLP = Path(__file__).resolve().parents[1] / "fixtures" / "frameworks" / "otlp"
SAMPLE = OTLP / "litellm-otel-callback.trace.json"
SYSTEM = "You answer questions about cities with the tools you have."
QUESTION = "What's the weather and the news in New York?"
INPUT_MESSAGES = [
    {"role": "system", "parts": [{"type": "text", "content": SYSTEM}]},
    {"role": "user", "parts": [{"type": "text", "content": QUESTION}]},
]
OUTPUT_MESSAGES = [
    {
        "role": "assistant",
        "finish_reason": "stop",
        "parts": [
            {"type": "text", "content": "This is a mock request"},
            {"type": "tool_call", "name": "get_weather", "arguments": {"city": "New York"}},
            {"type": "tool_call", "name": "get_news", "arguments": {"city": "New York"}},
        ],
    }
]


def with_current_attributes(tmp_path: Path, added: dict[str, Any]) -> Path:
    """The LiteLLM export with ``added`` set on its ``litellm_request`` span."""
    export = json.loads(SAMPLE.read_text())
    for resource in export["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                if span["name"] == "litellm_request":
                    span["attributes"] += [
                        {"key": key, "value": any_value(value)} for key, value in added.items()
                    ]
    path = tmp_path / "litellm-current.trace.json"
    path.write_text(json.dumps(export))
    return path


def the_call(path: Path) -> LLMCall:
    """The one LLM call read from a sample."""
    (session,) = otlp.read(path, ReadOptions(), SkipLog(str(path), strict=True))
    (call,) = [step.llm for step in session.steps() if step.llm is not None]
    return call


def test_an_empty_current_answer_never_hides_the_legacy_answer_and_tools(tmp_path: Path) -> None:
    path = with_current_attributes(
        tmp_path,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(INPUT_MESSAGES),
            "gen_ai.output.messages": "[]",
        },
    )
    expected = json.loads((OTLP / "litellm-otel-callback.expected.json").read_text())
    assert read_sample(path) == expected
    call = the_call(path)
    assert call.dialect == "openllmetry"
    assert call.unusable is None


def test_parts_only_one_convention_recorded_are_filled_in_and_named(tmp_path: Path) -> None:
    path = with_current_attributes(
        tmp_path,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(INPUT_MESSAGES),
            "gen_ai.output.messages": json.dumps(OUTPUT_MESSAGES),
        },
    )
    call = the_call(path)
    # Both readings hold the input and the answer; the current one is asked first and kept,
    # the tools only the legacy attributes list come from there.
    assert call.dialect == "genai"
    assert call.filled_from == {"tools": "openllmetry"}
    assert [tool.name for tool in call.request.tools] == ["get_weather", "get_news"]
    assert [c.name for c in call.response.message.tool_calls] == ["get_weather", "get_news"]
    assert "tools taken from the openllmetry reading; the genai reading had none" in call.notes
    result = CliRunner().invoke(app, ["show", str(path), "--explain"], env={"COLUMNS": "200"})
    assert (
        "recognised by genai: 2 input messages, an answer with text and 2 tool calls, usage\n"
        in result.stdout
    )


def test_explain_lists_every_dialect_that_recognised_the_span(tmp_path: Path) -> None:
    path = with_current_attributes(
        tmp_path,
        {"gen_ai.input.messages": json.dumps(INPUT_MESSAGES), "gen_ai.output.messages": "[]"},
    )
    result = CliRunner().invoke(app, ["show", str(path), "--explain"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "litellm_request: llm step, read by openllmetry → a unit" in result.stdout
    assert "recognised by genai: 2 input messages, no answer" in result.stdout
    assert (
        "recognised by openllmetry: 2 input messages, an answer with text and 2 tool calls, "
        "2 tools, usage" in result.stdout
    )


def test_a_malformed_reading_is_noted_and_never_hides_a_sound_one(tmp_path: Path) -> None:
    path = with_current_attributes(
        tmp_path,
        {
            "gen_ai.input.messages": json.dumps(INPUT_MESSAGES),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "tool_call", "arguments": {}}]}]
            ),
        },
    )
    call = the_call(path)
    assert call.dialect == "openllmetry"
    assert call.unusable is None
    assert (
        "the genai reading was left out: malformed_tool_call: a tool call without a name"
        in call.notes
    )
