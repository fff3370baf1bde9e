"""Scored runs built for the report tests: real units, scripted answers, real scoring.

Answers are written as result records directly (what the replay engine would append) and then
scored by ``score_run``, so every score, bucket and summary is the real scorer's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agent_backtest.runs import CallError, ResultRecord, ResultWriter, RunDirectory
from agent_backtest.runs.manifest import now
from agent_backtest.scoring.run import ScoreSettings, score_run
from agent_backtest.trace import LLMResponse, Message, ToolCall, Usage
from agent_backtest.units import Unit
from tests.conftest import write_tau_units
from tests.manifests import replay_manifest

Answer = LLMResponse | CallError
PLANTED = '<script>window.__planted = 1</script><img src=x onerror="window.__planted = 2">'


def tau_units(folder: Path, limit: int) -> list[Unit]:
    """The first ``limit`` units of the τ-bench sample."""
    path = write_tau_units(folder / "units.jsonl", limit=limit)
    return [Unit.model_validate_json(line) for line in path.read_text().splitlines()]


def golden(unit: Unit) -> Answer:
    """Production's own answer."""
    return unit.golden.model_copy(update={"usage": Usage(input_tokens=900, output_tokens=40)})


def wrong(unit: Unit) -> Answer:
    """A strict disagreement: text where production called a tool, a tool call where it
    answered in text."""
    if unit.golden.message.tool_calls:
        return LLMResponse(message=Message(role="assistant", content="Let me check."))
    return LLMResponse(
        message=Message(
            role="assistant",
            tool_calls=[ToolCall(id="c1", name="think", arguments={"thought": "hmm"})],
        )
    )


def timeout(unit: Unit) -> Answer:
    """An infrastructure error."""
    return CallError(kind="timeout", detail="no answer within 5 s")


def build_run(
    path: Path,
    units: Sequence[Unit],
    answer: Callable[[Unit], Answer],
    model: str = "mock/candidate",
    k: int = 1,
    labels: dict[str, str] | None = None,
) -> Path:
    """A scored run directory whose candidate gave ``answer(unit)`` on every repeat."""
    directory = RunDirectory(path)
    directory.create(overwrite=False)
    directory.write_units(units)
    manifest = replay_manifest(
        model,
        k,
        labels=labels or {},
        finished_at=now(),
        status="completed",
        units=len(units),
        sessions=len({u.session_id for u in units}),
    )
    manifest.save(directory.manifest_path)
    writer = ResultWriter(directory.results_path)
    try:
        for index, unit in enumerate(units):
            for repeat in range(k):
                writer.append(_record(unit, repeat, answer(unit), model, index))
    finally:
        writer.close()
    # A thread of its own: scoring runs an event loop, and the browser tests' Playwright
    # already runs one in this thread.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(score_run, directory, ScoreSettings()).result()
    return path


def _record(unit: Unit, repeat: int, answer: Answer, model: str, index: int) -> ResultRecord:
    response = answer if isinstance(answer, LLMResponse) else None
    error = answer if isinstance(answer, CallError) else None
    return ResultRecord(
        unit_id=unit.unit_id,
        repeat=repeat,
        session_id=unit.session_id,
        model=model,
        seed=repeat,
        request_sha=f"sha256:{index:064x}",
        response=response,
        error=error,
        attempts=1,
        latency_ms=None if error else 100.0 + index % 17 * 25.0,
    )
