"""``abt score``: score a run's results against production, without calling the candidate.

Reads ``units.jsonl`` and ``results.jsonl``, writes ``scores.jsonl`` and ``summary.json``.
Scoring again with other settings keeps the earlier files under their scoring id, so a new judge
or matcher mode never erases a previous verdict.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_backtest.errors import InputError, UserError
from agent_backtest.providers import (
    CallCounters,
    CallPolicy,
    ModelClient,
    ResponseCache,
    build_provider,
    load_model_config,
    parse_model_ref,
)
from agent_backtest.runs import ResultRecord, RunDirectory, read_results
from agent_backtest.runs.scores import ScoreRecord
from agent_backtest.runs.summary import RunFacts, ScoringSettings, Summary
from agent_backtest.scoring.buckets import SCORER, Scorer
from agent_backtest.scoring.judge import Judge, JudgeError, check_judge
from agent_backtest.scoring.summary import summarise
from agent_backtest.trace import sha256_of
from agent_backtest.units import AgentConfig

SCORING_CONCURRENCY = 16


@dataclass
class ScoreSettings:
    """What decides the scores; its hash is the scoring id."""

    judge: str | None = None
    fallback_judge: str | None = None
    judge_repeats: int = 1
    exact_strings: bool = False
    agent: AgentConfig = field(default_factory=AgentConfig)

    def as_dict(self) -> dict[str, Any]:
        """Plain data for summary.json and the scoring id."""
        return {
            "scorer": SCORER,
            "judge": self.judge,
            "fallback_judge": self.fallback_judge,
            "judge_repeats": self.judge_repeats,
            "exact_strings": self.exact_strings,
            "agent": self.agent.model_dump(),
        }

    def scoring_id(self) -> str:
        """A short hash naming these settings."""
        return sha256_of(self.as_dict())[len("sha256:") :][:12]


@dataclass
class ScoreOutcome:
    """What ``abt score`` prints."""

    summary: Summary
    judge_counts: dict[str, Any]
    kept_earlier: list[Path]


def score_run(directory: RunDirectory, settings: ScoreSettings) -> ScoreOutcome:
    """Score every result of the run in ``directory`` and write scores.jsonl and summary.json."""
    manifest = directory.load_manifest()
    results = _results_by_unit(directory.results_path)
    candidates = sorted({r.model for rs in results.values() for r in rs})
    warnings = _judge_warnings(settings, candidates)
    counters = CallCounters()
    records = asyncio.run(_score_all(directory, results, settings, manifest.config, counters))
    summary = summarise(
        records,
        ScoringSettings.model_validate({**settings.as_dict(), "scoring_id": settings.scoring_id()}),
        RunFacts(
            model=manifest.config.get("model"),
            k=manifest.config.get("k"),
            status=manifest.status,
            units=manifest.units,
        ),
        manifest.labels,
        warnings,
    )
    kept = directory.set_aside_scoring(settings.scoring_id())
    directory.write_scores(records, summary)
    return ScoreOutcome(summary, counters.as_dict(), kept)


def _results_by_unit(path: Path) -> dict[str, list[ResultRecord]]:
    if not path.exists():
        raise InputError(path, None, "no results yet: run abt replay first")
    by_unit: defaultdict[str, list[ResultRecord]] = defaultdict(list)
    for record in read_results(path):
        by_unit[record.unit_id].append(record)
    return by_unit


def _judge_warnings(settings: ScoreSettings, candidates: list[str]) -> list[str]:
    warnings: list[str] = []
    for judge in filter(None, (settings.judge, settings.fallback_judge)):
        parse_model_ref(judge, "judge")
        try:
            warnings += check_judge(judge, candidates)
        except JudgeError as exc:
            raise UserError(str(exc), "judge") from None
    return warnings


async def _score_all(
    directory: RunDirectory,
    results: dict[str, list[ResultRecord]],
    settings: ScoreSettings,
    run_config: dict[str, Any],
    counters: CallCounters,
) -> list[ScoreRecord]:
    judge, clients = _judge(settings, run_config, counters)
    scorer = Scorer(settings.agent, judge, settings.exact_strings, settings.scoring_id())
    gate = asyncio.Semaphore(SCORING_CONCURRENCY)

    async def one(unit_index: int, unit: Any, result: ResultRecord) -> tuple[int, int, ScoreRecord]:
        async with gate:
            return unit_index, result.repeat, await scorer.score(unit, result)

    try:
        tasks = [
            one(index, unit, result)
            for index, unit in enumerate(directory.read_units())
            for result in results.get(unit.unit_id, [])
        ]
        scored = await asyncio.gather(*tasks)
    finally:
        for client in clients:
            await client.provider.aclose()
            if client.cache is not None:
                client.cache.close()
    return [record for _, _, record in sorted(scored, key=lambda item: item[:2])]


def _judge(
    settings: ScoreSettings, run_config: dict[str, Any], counters: CallCounters
) -> tuple[Judge | None, list[ModelClient]]:
    if settings.judge is None:
        return None, []
    config = load_model_config(
        Path(run_config["config_file"]) if run_config.get("config_file") else None
    )
    policy = CallPolicy(
        timeout=run_config.get("timeout", 60.0), max_retries=run_config.get("max_retries", 4)
    )
    cache_dir = run_config.get("cache_dir")

    def client(model: str) -> ModelClient:
        ref = parse_model_ref(model, "judge")
        provider = build_provider(ref, config, None, SCORING_CONCURRENCY)
        cache = ResponseCache(Path(cache_dir)) if cache_dir else None
        return ModelClient(provider, policy, cache, counters=counters)

    main = client(settings.judge)
    fallback = client(settings.fallback_judge) if settings.fallback_judge else None
    judge = Judge(
        main,
        settings.judge,
        (fallback, settings.fallback_judge) if fallback and settings.fallback_judge else None,
        repeats=settings.judge_repeats,
    )
    return judge, [main, *([fallback] if fallback else [])]
