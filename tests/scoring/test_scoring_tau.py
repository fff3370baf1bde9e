"""Scoring on the τ-bench sample: the golden answers agree fully; perturbed ones land in the
buckets their perturbation names."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.providers import MockProvider, ModelClient, ModelConfig, ModelRef, payload_key
from agent_backtest.replaying import iter_jobs, run_jobs
from agent_backtest.runs import ResultWriter, RunDirectory
from agent_backtest.scoring.run import ScoreSettings, score_run
from agent_backtest.trace import LLMResponse, Message, ToolCall
from agent_backtest.trace.openai_wire import chat_payload
from agent_backtest.units import Unit
from tests.conftest import write_tau_units
from tests.manifests import replay_manifest

runner = CliRunner()


@pytest.fixture(scope="module")
def units_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tau_units(tmp_path_factory.mktemp("tau") / "units.jsonl")


def test_mock_golden_scores_full_strict_agreement(units_file: Path, tmp_path: Path) -> None:
    run = tmp_path / "golden"
    result = runner.invoke(
        app,
        [
            "replay",
            str(units_file),
            "--model",
            "mock/golden",
            "--out",
            str(run),
            "--no-cache",
            "--concurrency",
            "32",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((run / "summary.json").read_text())
    assert summary["counts"]["records"] == summary["counts"]["decided"] == 1381
    assert summary["overall"]["strict"]["mean"] == 1.0
    assert summary["overall"]["agreement"]["mean"] == 1.0
    assert set(summary["buckets"]) == {"match", "text_match"}
    assert summary["counts"]["sessions"] == 100
    assert "exact 1.000" in result.output


PERTURBATIONS = ("args_mismatch", "wrong_tool", "text_instead_of_tool", "extra_call", "match")


def perturbed(golden: LLMResponse, index: int, tool_names: list[str]) -> tuple[LLMResponse, str]:
    """A changed copy of production's answer, and the bucket the change should land in."""
    message = golden.message
    if not message.tool_calls:
        if index % 2:
            call = ToolCall(id="x", name=tool_names[0], arguments={})
            return golden.model_copy(
                update={"message": Message(role="assistant", tool_calls=[call])}
            ), "tool_instead_of_text"
        return golden, "text_match"
    call = message.tool_calls[0]
    kind = PERTURBATIONS[index % len(PERTURBATIONS)]
    if kind == "args_mismatch" and not (isinstance(call.arguments, dict) and call.arguments):
        kind = "wrong_tool"
    if kind == "args_mismatch":
        key = sorted(call.arguments)[0]
        changed = call.model_copy(update={"arguments": {**call.arguments, key: "CHANGED-9"}})
        calls = [changed, *message.tool_calls[1:]]
    elif kind == "wrong_tool":
        other = next(name for name in tool_names if name != call.name)
        calls = [call.model_copy(update={"name": other}), *message.tool_calls[1:]]
    elif kind == "text_instead_of_tool":
        return golden.model_copy(
            update={"message": Message(role="assistant", content="Let me check.")}
        ), kind
    elif kind == "extra_call":
        calls = [*message.tool_calls, call.model_copy(update={"id": "extra"})]
    else:
        calls = list(message.tool_calls)
    return golden.model_copy(
        update={"message": message.model_copy(update={"tool_calls": calls})}
    ), kind


def test_perturbed_answers_land_in_their_buckets(units_file: Path, tmp_path: Path) -> None:
    units = [Unit.model_validate_json(line) for line in units_file.read_text().splitlines()]
    tool_names = [tool.name for tool in units[0].request.tools or []]
    answers: dict[str, LLMResponse] = {}
    expected_by_key: dict[str, str] = {}
    expected: dict[str, str] = {}
    for index, unit in enumerate(units):
        key = payload_key(chat_payload(unit.request, "", None)[0])
        if key not in answers:  # a few units share a request: they get the same answer
            answers[key], expected_by_key[key] = perturbed(unit.golden, index, tool_names)
        expected[unit.unit_id] = expected_by_key[key]
    provider = MockProvider(
        "perturb",
        lambda payload: answers[
            payload_key({k: v for k, v in payload.items() if k not in ("model", "seed")})
        ],
    )
    directory = RunDirectory(tmp_path / "perturbed")
    directory.create(overwrite=False)
    directory.write_units(units)
    replay_manifest("mock/perturb").save(directory.manifest_path)

    async def replay() -> None:
        writer = ResultWriter(directory.results_path)
        try:
            await run_jobs(
                iter_jobs(enumerate(units), "mock/perturb", ModelConfig(), 1, 0),
                {ModelRef("mock", "perturb"): ModelClient(provider)},
                writer,
                16,
                asyncio.Event(),
            )
        finally:
            writer.close()

    asyncio.run(replay())
    outcome = score_run(directory, ScoreSettings())
    records = [
        json.loads(line) for line in (directory.path / "scores.jsonl").read_text().splitlines()
    ]
    assert len(records) == len(units)
    got = {r["unit_id"]: r["bucket"] for r in records}
    # A changed prose argument (think's thought, …) is compared by meaning: without a judge the
    # answer is not decided, and carries only its text similarity.
    prose = [r for r in records if r["bucket"] == "text_not_judged"]
    assert prose and all(r["status"] == "no_judge" and r["similarity"] < 0.7 for r in prose)
    assert all(expected[r["unit_id"]] == "args_mismatch" for r in prose)
    assert {k: v for k, v in got.items() if v != "text_not_judged"} == {
        k: v for k, v in expected.items() if got[k] != "text_not_judged"
    }
    mismatched = [r for r in records if r["bucket"] == "args_mismatch"]
    named = [r["differences"][0] for r in mismatched if r["differences"]]
    assert named and all(d["candidate"] == "CHANGED-9" for d in named)
    # a changed string is a value mismatch; a list or object replaced by a string is a type one
    assert all(d["kind"] == ("value" if isinstance(d["golden"], str) else "type") for d in named)
    counts: dict[str, Any] = outcome.summary.buckets
    assert sum(counts.values()) == len(units)
    strict = outcome.summary.overall.strict.mean
    matches = sum(b in ("match",) for b in expected.values())
    text_same = sum(b == "text_match" for b in expected.values())
    assert strict == pytest.approx((matches + text_same) / (len(units) - len(prose)))
