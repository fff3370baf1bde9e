"""``abt show FILE --explain``: every span or observation, what it became and why not a unit."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agent_backtest.cli.app import app

runner = CliRunner()
CORPUS = Path(__file__).parents[1] / "fixtures" / "frameworks" / "langfuse"


def show(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, ["show", *map(str, args)], env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def test_explain_names_every_observation_and_the_blocker_of_each_llm_step() -> None:
    sample = CORPUS / "agno-2025-06-11.trace.json"
    code, out, _ = show(sample, "--explain")
    assert code == 0
    for observation in json.loads(sample.read_text())["observations"]:
        assert f"observation {observation['id']}" in out
    assert "OpenAIChat.invoke: llm step, read by openinference → a unit" in out
    assert "no unit: input_is_flat_string" in out
    assert "no unit: tool_result_without_call" in out
    assert "duckduckgo_search: tool step, read by openinference" in out
    assert (
        "6 records (langfuse): 1 LLM steps give a unit; LLM steps without one: "
        "input_is_flat_string 2 · tool_result_without_call 1" in out
    )


def test_explain_counts_duplicates_and_undecodable_records(tmp_path: Path) -> None:
    export = json.loads((CORPUS / "vercel-aisdk-2025-11-17.trace.json").read_text())
    export["observations"] = [*export["observations"], export["observations"][1], "not an object"]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    code, out, _ = show(path, "--explain")
    assert code == 0
    assert "ai.generateText: agent step" in out
    assert "skipped: duplicate_span: a repeat of the span at line 1, $.observations[1]" in out
    assert "skipped: malformed_observation" in out
    assert "duplicate_span 1 · malformed_observation 1" in out


def test_no_sessions_points_to_explain_not_to_the_same_command(tmp_path: Path) -> None:
    export = json.loads((CORPUS / "autogen-2025-06-06.trace.json").read_text())
    export["observations"] = ["not an object"]
    sample = tmp_path / "unusable.json"
    sample.write_text(json.dumps(export))
    code, _, err = show(sample)
    assert code == 2
    assert "--explain says why" in err
    code, _, err = show(CORPUS / "koog-2025-08-26.trace.json", "--session", "nope")
    assert code == 2
    assert "no session 'nope'; the file holds 1:" in err
