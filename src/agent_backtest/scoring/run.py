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
from agent_backtest.providers import CallCounters, ModelClient, ModelConfig, load_model_config
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.families import JudgeError, check_judge
from agent_backtest.providers.roles import check_role, close_clients, open_clients
from agent_backtest.runs import ResultRecord, RunDirectory, RunManifest, read_results
from agent_backtest.runs.scores import ScoreRecord
from agent_backtest.runs.summary import RunFacts, ScoringSettings, Summary
from agent_backtest.scoring.buckets import SCORER, Scorer
from agent_backtest.scoring.judge import Judge
from agent_backtest.scoring.summary import summarise
from agent_backtest.trace import sha256_of
from agent_backtest.units import AgentConfig, Unit


@dataclass
class ScoreSettings:
    """What decides the scores; its hash is the scoring id."""

    judge: ModelRole | None = None
    fallback_judge: ModelRole | None = None
    judge_repeats: int = 1
    exact_strings: bool = False
    agent: AgentConfig = field(default_factory=AgentConfig)

    def as_dict(self) -> dict[str, Any]:
        """Plain data for summary.json and the scoring id."""
        return {
            "scorer": SCORER,
            "judge": self.judge.model if self.judge else None,
            "fallback_judge": self.fallback_judge.model if self.fallback_judge else None,
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


def score_run(
    directory: RunDirectory, settings: ScoreSettings, config: ModelConfig | None = None
) -> ScoreOutcome:
    """Score every result of the run in ``directory`` and write scores.jsonl and summary.json.

    ``config`` is the model config the judges are reached through (default: the run's).
    Every judge is checked (reachable, none of the candidates) before anything is written.
    """
    manifest = directory.load_manifest()
    if config is None:
        source = manifest.config.config_file
        config = load_model_config(Path(source) if source else None)
    results = _results_by_unit(directory.results_path)
    candidates = sorted({r.model for rs in results.values() for r in rs})
    warnings = _judge_warnings(settings, candidates, config)
    counters = CallCounters()
    records = asyncio.run(_score_all(directory, results, settings, config, counters))
    return _write_scoring(directory, manifest, settings, records, warnings, counters)


class LiveScoring:
    """Scores each answer of a run without a judge the moment it lands, so the run's scores
    are ready when its last answer is; :meth:`finish` writes them as :func:`score_run` would."""

    def __init__(self, settings: ScoreSettings) -> None:
        if settings.judge is not None:
            raise ValueError("live scoring is for runs without a judge")
        self.settings = settings
        self.scorer = Scorer(settings.agent, None, settings.exact_strings, settings.scoring_id())
        self.scored: list[tuple[int, int, ScoreRecord]] = []

    async def add(self, position: int, unit: Unit, result: ResultRecord) -> None:
        """Score one answer; ``position`` is its unit's place in units.jsonl."""
        self.scored.append((position, result.repeat, await self.scorer.score(unit, result)))

    def finish(self, directory: RunDirectory) -> ScoreOutcome:
        """Write scores.jsonl and summary.json of every answer added, in unit order."""
        records = [record for _, _, record in sorted(self.scored, key=lambda item: item[:2])]
        manifest = directory.load_manifest()
        return _write_scoring(directory, manifest, self.settings, records, [], CallCounters())


def _write_scoring(
    directory: RunDirectory,
    manifest: RunManifest,
    settings: ScoreSettings,
    records: list[ScoreRecord],
    warnings: list[str],
    counters: CallCounters,
) -> ScoreOutcome:
    """The summary of ``records``, written with them (an earlier scoring set aside)."""
    summary = summarise(
        records,
        ScoringSettings.model_validate({**settings.as_dict(), "scoring_id": settings.scoring_id()}),
        RunFacts(
            model=manifest.config.candidate.model,
            k=manifest.config.k,
            status=manifest.status,
            units=manifest.units,
            partial=manifest.status == "interrupted",
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


def _judge_warnings(
    settings: ScoreSettings, candidates: list[str], config: ModelConfig
) -> list[str]:
    warnings: list[str] = []
    for judge in filter(None, (settings.judge, settings.fallback_judge)):
        try:
            warnings += check_judge(judge.model, candidates)
        except JudgeError as exc:
            raise UserError(str(exc), judge.parameter) from None
        check_role(judge, [judge.ref], config)
    return warnings


async def _score_all(
    directory: RunDirectory,
    results: dict[str, list[ResultRecord]],
    settings: ScoreSettings,
    config: ModelConfig,
    counters: CallCounters,
) -> list[ScoreRecord]:
    judge, clients = _judge(settings, config, counters)
    scorer = Scorer(settings.agent, judge, settings.exact_strings, settings.scoring_id())
    width = settings.judge.concurrency if settings.judge else 1
    scored: list[tuple[int, int, ScoreRecord]] = []
    in_flight: set[asyncio.Task[tuple[int, int, ScoreRecord]]] = set()

    async def one(index: int, unit: Unit, result: ResultRecord) -> tuple[int, int, ScoreRecord]:
        return index, result.repeat, await scorer.score(unit, result)

    try:
        # Units stream from disk: at most `width` answers are being scored at once, so a unit
        # (which carries its whole request) is released as soon as its answers are scored.
        for index, unit in enumerate(directory.read_units()):
            for result in results.pop(unit.unit_id, []):
                if width == 1:  # nothing to overlap without a judge: no task per answer
                    scored.append(await one(index, unit, result))
                    continue
                if len(in_flight) >= width:
                    done, in_flight = await asyncio.wait(
                        in_flight, return_when=asyncio.FIRST_COMPLETED
                    )
                    scored += [task.result() for task in done]
                in_flight.add(asyncio.create_task(one(index, unit, result)))
        if in_flight:
            scored += [task.result() for task in (await asyncio.wait(in_flight))[0]]
    finally:
        for task in in_flight:
            task.cancel()
        await close_clients(clients)
    return [record for _, _, record in sorted(scored, key=lambda item: item[:2])]


def _judge(
    settings: ScoreSettings, config: ModelConfig, counters: CallCounters
) -> tuple[Judge | None, list[ModelClient]]:
    """The judge, asking through one client per judge role, and the clients to close."""
    if settings.judge is None:
        return None, []
    main_role, fallback_role = settings.judge, settings.fallback_judge
    main = open_clients(main_role, [main_role.ref], config, counters)[main_role.ref]
    fallback = None
    if fallback_role is not None:
        fallback = open_clients(fallback_role, [fallback_role.ref], config, counters)[
            fallback_role.ref
        ]
    judge = Judge(
        main,
        main_role.model,
        (fallback, fallback_role.model) if fallback and fallback_role else None,
        repeats=settings.judge_repeats,
    )
    return judge, [main, *([fallback] if fallback else [])]
