"""``abt score`` on small runs: judge verdicts, unscored items, infra errors, kept scorings."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.providers import CallPolicy, MockProvider, ModelClient, ProviderError
from agent_backtest.runs import ResultRecord, ResultWriter, RunDirectory
from agent_backtest.scoring.buckets import Scorer
from agent_backtest.scoring.judge import Judge
from agent_backtest.trace import LLMResponse, Message, ToolCall, ToolDef
from agent_backtest.units import AgentConfig, Unit
from tests.manifests import replay_manifest
from tests.scoring.builders import answer_to, step_unit

runner = CliRunner()
TOOL = ToolDef(
    name="send_note",
    parameters={
        "type": "object",
        "properties": {"to": {"type": "string"}, "note": {"type": "string"}},
    },
)


def unit(index: int, golden: Message, session: str = "s1") -> Unit:
    return step_unit(index, golden, session=session, tools=[TOOL])


def result(u: Unit, answer: Message | None, error: str | None = None) -> ResultRecord:
    return answer_to(u, answer, error)


def verdict(score: float, reason: str = "same meaning") -> LLMResponse:
    return LLMResponse(
        message=Message(role="assistant", content=json.dumps({"score": score, "reason": reason}))
    )


def scorer(answers: list, retries: int = 4) -> Scorer:
    policy = CallPolicy(max_retries=retries, backoff_initial=0)
    judge = Judge(ModelClient(MockProvider("judge", answers), policy), "openai/judge-model")
    return Scorer(AgentConfig(), judge, exact_strings=False, scoring_id="test")


def test_text_answers_are_judged_and_a_judge_outage_is_a_judge_error() -> None:
    u = unit(0, Message(role="assistant", content="Your flight is booked."))
    answer = Message(role="assistant", content="Done: the booking is made.")
    judged = asyncio.run(scorer([verdict(1)]).score(u, result(u, answer)))
    assert (judged.bucket, judged.score, judged.method, judged.status) == (
        "text_match",
        1.0,
        "judge",
        "scored",
    )
    assert judged.judged[0].prompt_sha256 and judged.judged[0].reasons == ["same meaning"]
    down = [ProviderError("http_5xx", "down", 503)] * 2
    failed = asyncio.run(scorer(down, retries=1).score(u, result(u, answer)))
    assert (failed.status, failed.bucket, failed.score) == ("judge_error", None, None)
    assert failed.error_kind == "judge_http_5xx" and failed.unscored_reason
    invalid = asyncio.run(
        scorer([LLMResponse(message=Message(role="assistant", content="no idea"))] * 2).score(
            u, result(u, answer)
        )
    )
    assert (invalid.status, invalid.bucket, invalid.score) == ("unscored", "unscored", None)
    assert invalid.error_kind is None and "no valid verdict" in (invalid.unscored_reason or "")


def test_free_text_argument_is_judged_by_meaning() -> None:
    golden = Message(
        role="assistant",
        tool_calls=[
            ToolCall(
                id="1",
                name="send_note",
                arguments={"to": "ops", "note": "The printer on floor two is out of toner again."},
            )
        ],
    )
    candidate = Message(
        role="assistant",
        tool_calls=[
            ToolCall(
                id="2",
                name="send_note",
                arguments={"to": "OPS ", "note": "Floor 2 printer has no toner left."},
            )
        ],
    )
    u = unit(1, golden)
    same = asyncio.run(scorer([verdict(1)]).score(u, result(u, candidate)))
    assert (same.bucket, same.strict, same.method) == ("match", False, "judge")
    assert same.judged[0].target == "call 0 argument note"
    different = asyncio.run(scorer([verdict(0, "different")]).score(u, result(u, candidate)))
    assert different.bucket == "args_mismatch" and different.score < 1


def test_infrastructure_errors_are_not_scores() -> None:
    u = unit(2, Message(role="assistant", content="hi"))
    record = asyncio.run(scorer([]).score(u, result(u, None, error="timeout")))
    assert (record.status, record.bucket, record.score, record.error_kind) == (
        "infra_error",
        None,
        None,
        "timeout",
    )


@pytest.fixture
def small_run(tmp_path: Path) -> Path:
    units = [
        unit(i, Message(role="assistant", content=f"answer {i}"), session=f"s{i % 3}")
        for i in range(6)
    ]
    directory = RunDirectory(tmp_path / "run")
    directory.create(overwrite=False)
    directory.write_units(units)
    replay_manifest("openai/candidate").save(directory.manifest_path)
    writer = ResultWriter(directory.results_path)
    for i, u in enumerate(units):
        if i == 5:
            writer.append(result(u, None, error="http_429"))
        else:
            text = f"answer {i if i < 3 else 9}"
            writer.append(result(u, Message(role="assistant", content=text)))
    writer.close()
    return directory.path


def test_abt_score_writes_scores_and_keeps_earlier_ones(small_run: Path) -> None:
    outcome = runner.invoke(app, ["score", str(small_run)])
    assert outcome.exit_code == 0, outcome.output
    summary = json.loads((small_run / "summary.json").read_text())
    assert summary["counts"] == {
        "records": 6,
        "decided": 3,
        "no_judge": 2,
        "unscored": 0,
        "infra_errors": 1,
        "infra_errors_by_kind": {"http_429": 1},
        "units": 6,
        "sessions": 3,
    }
    # the three equal texts are decided; the two others only a judge could decide
    assert summary["overall"]["strict"]["mean"] == 1.0
    assert summary["overall"]["agreement"]["n"] == 3
    assert summary["methods"] == {"exact_text": 3}
    assert summary["text_similarity"]["n"] == 2
    output = " ".join(outcome.output.split())
    assert "decided 3 of 6 (text not judged: 2; unscored: 0; infrastructure errors: 1)" in output
    assert "text_similarity" in output and "not a verdict" in output
    first_id = summary["scoring"]["scoring_id"]

    assert runner.invoke(app, ["report", str(small_run)]).exit_code == 0
    again = runner.invoke(app, ["score", str(small_run), "--exact-strings"])
    assert again.exit_code == 0
    assert "shows an earlier scoring: abt report" in " ".join(again.output.split())
    assert (small_run / f"summary.{first_id}.json").exists()
    assert (small_run / f"scores.{first_id}.jsonl").exists()
    assert json.loads((small_run / "summary.json").read_text())["scoring"]["exact_strings"]


def test_judge_that_is_the_candidate_is_refused(small_run: Path) -> None:
    outcome = runner.invoke(app, ["score", str(small_run), "--judge", "openai/candidate"])
    assert outcome.exit_code == 2 and "candidate" in outcome.stderr
