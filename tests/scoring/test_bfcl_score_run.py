"""BFCL agreement through ``abt score``: the leaderboard's questions as units with answer keys.

Every (prediction, possible answer) pair of ``bfcl_cases`` becomes a unit (the question's
functions as its tools, the correct prediction as production's answer, BFCL's possible answer as
its answer key) and a result (the prediction as the candidate's answer) in a run directory;
``abt score`` scores the run, and its ``match`` verdicts are compared with BFCL's checker. Every
disagreement must be a difference documented in ``docs/bfcl-differences.md``.

Needs ``pip install --no-deps bfcl-eval``; skipped otherwise.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.runs import ResultRecord, ResultWriter, RunDirectory
from agent_backtest.trace import LLMRequest, LLMResponse, Message
from agent_backtest.units import Unit, make_unit_id
from tests.manifests import replay_manifest
from tests.optional import require
from tests.scoring.bfcl_cases import (
    Pair,
    bfcl_valid,
    build_pairs,
    explain,
    load_checker,
    load_entries,
    ours_equal,
    require_checker,
)

require("bfcl_eval", "pip install --no-deps bfcl-eval==2026.3.23")

CHECKER = load_checker()
REQUIRED_AGREEMENT = 0.999
CANDIDATE = "openai/candidate"


@pytest.fixture(autouse=True)
def bfcl_installed() -> None:
    """Skip without bfcl-eval on a developer machine; under CI its absence is a failure."""
    require_checker(CHECKER)


def unit_of(index: int, pair: Pair) -> Unit:
    """The pair's question as a unit: production answered with the correct prediction."""
    request = LLMRequest(
        model="bfcl",
        messages=[Message(role="user", content=f"BFCL question {pair.entry.id}")],
        tools=list(pair.tools.values()),
    )
    return Unit(
        unit_id=make_unit_id(pair.entry.id, f"{index}-{pair.mutation}"),
        session_id=pair.entry.id,
        turn_index=0,
        step_id=f"{index}-{pair.mutation}",
        kind="action",
        request=request,
        golden=LLMResponse(message=Message(role="assistant", tool_calls=pair.golden)),
        answer_key=pair.key,
    )


def result_of(unit: Unit, pair: Pair) -> ResultRecord:
    """The pair's prediction as the candidate's answer."""
    return ResultRecord(
        unit_id=unit.unit_id,
        repeat=0,
        session_id=unit.session_id,
        model=CANDIDATE,
        request_sha="sha256:bfcl",
        attempts=1,
        response=LLMResponse(message=Message(role="assistant", tool_calls=pair.calls)),
    )


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Pair, bool, str]]:
    """(pair, BFCL valid, our bucket) for every pair, ours read from the run's scores.jsonl."""
    pairs = build_pairs(load_entries())
    units = [unit_of(index, pair) for index, pair in enumerate(pairs)]
    directory = RunDirectory(tmp_path_factory.mktemp("bfcl") / "run")
    directory.create(overwrite=False)
    directory.write_units(units)
    replay_manifest(CANDIDATE).save(directory.manifest_path)
    writer = ResultWriter(directory.results_path)
    for unit, pair in zip(units, pairs, strict=True):
        writer.append(result_of(unit, pair))
    writer.close()
    outcome = CliRunner().invoke(app, ["score", str(directory.path)])
    assert outcome.exit_code == 0, outcome.output
    buckets = {record.unit_id: record.bucket for record in directory.read_scores()}
    return [
        (pair, bfcl_valid(CHECKER, pair), buckets[unit.unit_id])
        for unit, pair in zip(units, pairs, strict=True)
    ]


def test_abt_score_agrees_with_bfcl(
    scored: list[tuple[Pair, bool, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """At least 99.9% of the verdicts agree, and every disagreement is a documented one."""
    disagreements = [
        (pair, bucket == "match") for pair, bfcl, bucket in scored if bfcl != (bucket == "match")
    ]
    reasons = Counter(explain(CHECKER, pair, ours) for pair, ours in disagreements)
    agreeing = len(scored) - len(disagreements)
    with capsys.disabled():
        print(
            f"\nabt score against BFCL: {agreeing:,} of {len(scored):,} answers agree "
            f"({agreeing / len(scored):.2%}); documented differences: {dict(reasons)}"
        )
    assert reasons[None] == 0, [
        (pair.entry.id, pair.mutation, pair.prediction)
        for pair, ours in disagreements
        if explain(CHECKER, pair, ours) is None
    ][:5]
    assert agreeing / len(scored) >= REQUIRED_AGREEMENT


def test_refusals_are_named_by_their_bucket(scored: list[tuple[Pair, bool, str]]) -> None:
    """What BFCL refuses gets the bucket of its kind of error, not one catch-all."""
    refused = Counter(bucket for _, bfcl, bucket in scored if not bfcl)
    assert {"wrong_tool", "missing_call", "extra_call", "args_mismatch"} <= set(refused)


def test_gold_file_from_the_agent_config(tmp_path: Path) -> None:
    """The same keys given in a gold file named by the agent config score alike."""
    pairs = [pair for pair in build_pairs(load_entries()[:40]) if pair.mutation != "correct"]
    units = [unit_of(index, pair) for index, pair in enumerate(pairs)]
    gold = tmp_path / "gold.jsonl"
    gold.write_bytes(
        b"".join(
            orjson.dumps(
                {"unit_id": unit.unit_id, "calls": [c.model_dump() for c in unit.answer_key or []]}
            )
            + b"\n"
            for unit in units
        )
    )
    (tmp_path / "agent.toml").write_text('answer_keys = "gold.jsonl"\n')
    directory = RunDirectory(tmp_path / "run")
    directory.create(overwrite=False)
    directory.write_units(unit.model_copy(update={"answer_key": None}) for unit in units)
    replay_manifest(CANDIDATE).save(directory.manifest_path)
    writer = ResultWriter(directory.results_path)
    for unit, pair in zip(units, pairs, strict=True):
        writer.append(result_of(unit, pair))
    writer.close()
    args = ["score", str(directory.path), "--agent-config", str(tmp_path / "agent.toml")]
    outcome = CliRunner().invoke(app, args)
    assert outcome.exit_code == 0, outcome.output
    matches = [record.bucket == "match" for record in directory.read_scores()]
    assert matches == [ours_equal(pair) for pair in pairs]
    assert sum(matches) and not all(matches)
