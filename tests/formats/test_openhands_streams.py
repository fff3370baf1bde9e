"""OpenHands event streams kept outside OpenHands' repository, and what their rebuilt requests
show the model: each tool output as OpenHands' conversation memory puts it in the prompt.

The recordings are evaluation outputs another team committed with its benchmark runs (see the
folder's PROVENANCE.md); their expected units are checked with the rest of the corpus in
``test_whole_runs.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_backtest.formats import ReadOptions, SessionStream
from tests.formats.conformance import units_of

CORPUS = Path(__file__).parents[1] / "fixtures" / "frameworks" / "openhands"
GPT_5 = CORPUS / "gpt-5-swe-bench-java-fastjson2.jsonl"
GPT_4O = CORPUS / "gpt-4o-multi-swe-bench-logstash.jsonl"
CUT_MARKER = "\n[... Observation truncated due to length ...]\n"


def run_of(recording: Path) -> dict[str, Any]:
    return json.loads(recording.read_text().splitlines()[0])


def tool_messages(recording: Path) -> dict[str, str | None]:
    """The tool outputs the last call of a recording was shown, by call id."""
    last = units_of(recording)[-1]
    return {m.tool_call_id or "": m.text() for m in last.request.messages if m.role == "tool"}


def outputs_shown(run: dict[str, Any], shown: dict[str, str | None]) -> list[dict[str, Any]]:
    """The observations whose output the last call of ``run`` was shown."""
    return [
        event
        for event in run["history"]
        if event.get("observation")
        and (event.get("tool_call_metadata") or {}).get("tool_call_id") in shown
    ]


def test_a_command_that_printed_nothing_is_shown_with_its_exit_code_and_directory() -> None:
    grep = next(
        e for e in run_of(GPT_5)["history"] if e.get("observation") == "run" and not e["content"]
    )
    call_id = grep["tool_call_metadata"]["tool_call_id"]
    assert tool_messages(GPT_5)[call_id] == (
        "\n[The command completed with exit code 0.]"
        "\n[Current working directory: /workspace]"
        "\n[Command finished with exit code 0]"
    )
    # The tool step keeps what the command printed.
    session = next(iter(SessionStream([GPT_5], ReadOptions())))
    step = next(s for s in session.steps() if s.tool is not None and s.tool.call_id == call_id)
    assert step.tool is not None and step.tool.result == ""


def test_file_reads_and_thoughts_are_shown_as_recorded() -> None:
    shown = tool_messages(GPT_4O)
    outputs = outputs_shown(run_of(GPT_4O), shown)
    assert [e["observation"] for e in outputs] == ["read", "think"]
    for event in outputs:
        assert shown[event["tool_call_metadata"]["tool_call_id"]] == event["content"]


def test_outputs_longer_than_the_runs_message_limit_are_cut_in_the_middle(tmp_path: Path) -> None:
    run = run_of(GPT_5)
    run["metadata"]["llm_config"]["max_message_chars"] = 400
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(run) + "\n")
    shown = tool_messages(path)
    outputs = outputs_shown(run, shown)
    assert [e["observation"] for e in outputs] == ["run", "read", "run", "read", "run"]
    for event in outputs:
        text = shown[event["tool_call_metadata"]["tool_call_id"]] or ""
        if event["observation"] == "read":  # OpenHands' editor already cut what it read
            assert text == event["content"]
        elif len(event["content"]) > 400:
            assert len(text) == 400 + len(CUT_MARKER)
            assert text.startswith(event["content"][:200])
            assert CUT_MARKER in text
    commands = [e for e in outputs if e["observation"] == "run" and len(e["content"]) > 400]
    assert commands
    for event in commands:  # the tail kept is the shell state's
        text = shown[event["tool_call_metadata"]["tool_call_id"]] or ""
        assert text.endswith("[Command finished with exit code 0]")


def test_an_error_is_shown_with_the_line_openhands_adds(tmp_path: Path) -> None:
    run = run_of(GPT_4O)
    # The editor's answer to a path it cannot view, as an error observation records it.
    view = next(e for e in run["history"] if e.get("observation") == "read")
    view.update(observation="error", extras={"error_id": ""})
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(run) + "\n")
    shown = tool_messages(path)[view["tool_call_metadata"]["tool_call_id"]]
    assert shown == view["content"] + "\n[Error occurred in processing last action]"
    session = next(iter(SessionStream([path], ReadOptions())))
    failed = [s for s in session.steps() if s.status == "error"]
    assert [s.tool.call_id for s in failed if s.tool] == [
        view["tool_call_metadata"]["tool_call_id"]
    ]
