"""``abt score``: score a run's results against production, without calling the candidate.

Reads ``units.jsonl`` and ``results.jsonl``, writes ``scores.jsonl`` and ``summary.json``.
Scoring again with other settings keeps the earlier files under their scoring id, so a new judge
or matcher mode never erases a previous verdict.
"""

from __future__ import annotations

import gc
import tempfile
from array import array
from collections.abc import Coroutine, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from agent_backtest.errors import InputError
from agent_backtest.providers import CallCounters, ModelConfig, load_model_config
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.prices import PriceTable
from agent_backtest.providers.roles import check_judges
from agent_backtest.runs import (
    ResultRecord,
    RunDirectory,
    RunManifest,
    private_atomic_writer,
)
from agent_backtest.runs.documents import write_document
from agent_backtest.runs.records import ResultIndex
from agent_backtest.runs.scores import ScoreRecord
from agent_backtest.runs.spending import RoleSpend, replay_spend
from agent_backtest.runs.summary import RunFacts, ScoringSettings, Summary
from agent_backtest.scoring.buckets import SCORER, Scorer
from agent_backtest.scoring.parallel import (
    CHUNKS_PER_PROCESS,
    score_in_order,
    worker_count,
)
from agent_backtest.scoring.summary import SummaryBuilder
from agent_backtest.trace import dump_record, sha256_of
from agent_backtest.units import AgentConfig, Unit
from agent_backtest.units.io import Stretch, read_units_file
from agent_backtest.units.io import stretches as units_stretches


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
    judge_counts: dict[str, dict[str, Any]]
    """The calls of this scoring, by judge role."""
    kept_earlier: list[Path]


def score_run(
    directory: RunDirectory,
    settings: ScoreSettings,
    config: ModelConfig | None = None,
    workers: int | None = None,
    notes: Sequence[str] = (),
) -> ScoreOutcome:
    """Score every result of the run in ``directory`` and write scores.jsonl and summary.json;
    ``notes`` are warnings found before scoring, kept with the summary's.

    ``config`` is the model config the judges are reached through (default: the run's).
    Every judge is checked (reachable, none of the candidates) before anything is written.
    Units and results are read one at a time and each score is written as it is made: the
    summary keeps sums, not records. Without a judge, ``workers`` processes share the units
    (default: one per core on runs large enough to gain; see :mod:`.parallel`), with the
    same files as a result.
    """
    manifest = directory.load_manifest()
    if config is None:
        source = manifest.config.config_file
        config = load_model_config(Path(source) if source else None)
    if not directory.results_path.exists():
        raise InputError(directory.results_path, None, "no results yet: run abt replay first")
    results = ResultIndex(directory.results_path)
    judges = [judge for judge in (settings.judge, settings.fallback_judge) if judge]
    warnings = [*notes, *check_judges(judges, sorted(results.models), config)]
    counters = {role: CallCounters() for role in JUDGE_ROLES}
    scores = _ScoresFile(directory, manifest, settings, config)
    count = 1 if settings.judge else worker_count(workers, results.records)
    try:
        with scores.writing(), _rare_collections():
            if settings.judge is None:
                _score_without_judge(directory, results, settings, scores, count)
            else:
                # Imported only here: it loads the event loop and the model clients.
                from agent_backtest.scoring.judged import score_with_judge

                units = directory.read_units()
                score_with_judge(units, results, settings, config, counters, scores.write)
    finally:
        results.close()
    return scores.outcome(warnings, counters)


JUDGE_ROLES = ("judge", "fallback_judge")


@contextmanager
def _rare_collections() -> Iterator[None]:
    """Run the cyclic garbage collector less often while scoring.

    Scoring makes and drops a few hundred objects an answer, none of them in cycles, so
    reference counting frees them all; with the default thresholds the collector still
    walks the young objects every 700 allocations and, every hundred of those walks, the
    older ones too, which cost a fifth of scoring a run without a judge. Cycles made
    meanwhile are still collected, every 50,000 allocations.
    """
    before = gc.get_threshold()
    gc.set_threshold(50_000, 100, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _score_without_judge(
    directory: RunDirectory,
    results: ResultIndex,
    settings: ScoreSettings,
    scores: _ScoresFile,
    count: int,
) -> None:
    """Score without a judge in ``count`` processes sharing units.jsonl's chunks (one
    process: the whole file), writing every score to ``scores`` in unit order."""
    scorer = Scorer(settings.agent, None, settings.exact_strings, settings.scoring_id())
    chunks = CHUNKS_PER_PROCESS * count if count > 1 else 1
    stretches = units_stretches(directory.units_path, chunks)
    index = results.detached()  # the workers' copy opens the file in each of them

    def score(stretch: Stretch) -> Iterator[ScoreRecord]:
        for unit in read_units_file(directory.units_path, stretch):
            for result in index.of_unit(unit.unit_id):
                yield _at_once(scorer.score(unit, result))

    try:
        score_in_order(stretches, count, score, scores.write)
    finally:
        index.close()


def _at_once(step: Coroutine[Any, Any, ScoreRecord]) -> ScoreRecord:
    """The record a scoring without a judge returns: it never waits on anything, so it runs
    to its end at the first step, with no event loop."""
    try:
        step.send(None)
    except StopIteration as done:
        return done.value
    step.close()
    raise RuntimeError("scoring without a judge waited on something")


class LiveScoring:
    """Scores each answer of a run without a judge the moment it lands, so the run's scores
    are ready when its last answer is; :meth:`finish` writes them as :func:`score_run` would.

    Answers land in any order and scores.jsonl is in unit order, so each score waits in an
    unnamed temporary file (mode 0600, gone with the process) until :meth:`finish` copies
    them in order, counting each in the summary then (in unit order, as :func:`score_run`
    counts them, so the sums round alike): memory keeps where each score starts, not records.
    """

    def __init__(self, settings: ScoreSettings, repeats: int) -> None:
        if settings.judge is not None:
            raise ValueError("live scoring is for runs without a judge")
        self.settings = settings
        self.scorer = Scorer(settings.agent, None, settings.exact_strings, settings.scoring_id())
        self.repeats = repeats
        # open from the first answer to finish(), which closes it
        self._spool = tempfile.TemporaryFile()  # noqa: SIM115
        self._places = array("q")  # position, repeat, offset and length of each score

    async def add(self, position: int, unit: Unit, result: ResultRecord) -> None:
        """Score one answer; ``position`` is its unit's place in units.jsonl."""
        self.add_now(position, unit, result)

    def add_now(self, position: int, unit: Unit, result: ResultRecord) -> None:
        """:meth:`add` outside an event loop (scoring without a judge waits on nothing)."""
        line = dump_record(_at_once(self.scorer.score(unit, result))) + b"\n"
        self._places.extend((position, result.repeat, self._spool.tell(), len(line)))
        self._spool.write(line)

    def finish(self, directory: RunDirectory) -> ScoreOutcome:
        """Write scores.jsonl and summary.json of every answer added, in unit order."""
        places = self._places
        order = sorted(range(0, len(places), 4), key=lambda i: (places[i], places[i + 1]))
        manifest = directory.load_manifest()
        scores = _ScoresFile(directory, manifest, self.settings, None, self.repeats)
        with self._spool, scores.writing():
            for i in order:
                self._spool.seek(places[i + 2])
                line = self._spool.read(places[i + 3])
                scores.write(ScoreRecord.model_validate_json(line), line)
        return scores.outcome([], {})


class _ScoresFile:
    """scores.jsonl being written a record at a time, then the summary of what was written.

    Each record is counted in the summary as it is written; an earlier scoring under another
    id is set aside only once the new scores are whole, just before they take its place.
    """

    def __init__(
        self,
        directory: RunDirectory,
        manifest: RunManifest,
        settings: ScoreSettings,
        config: ModelConfig | None,
        repeats: int | None = None,
    ) -> None:
        self.directory, self.manifest, self.settings = directory, manifest, settings
        self.config = config
        self.summary = SummaryBuilder(repeats or manifest.config.k)
        self.kept: list[Path] = []
        self._handle: BinaryIO | None = None

    @contextmanager
    def writing(self) -> Iterator[BinaryIO]:
        """The open scores file (written atomically, mode 0600)."""
        with private_atomic_writer(self.directory.scores_path) as handle:
            self._handle = handle
            try:
                yield handle
            finally:
                self._handle = None
            self.kept = self.directory.set_aside_scoring(self.settings.scoring_id())

    def write(self, record: ScoreRecord, line: bytes | None = None) -> None:
        """Write one record (``line``: its line, when it is already serialised) and count it."""
        if self._handle is None:
            raise RuntimeError("scores are written inside writing()")
        self._handle.write(line or dump_record(record) + b"\n")
        self.summary.add(record)

    def outcome(self, warnings: list[str], counters: dict[str, CallCounters]) -> ScoreOutcome:
        """The summary of the records written, saved as summary.json; the judges' calls
        (``counters`` by role) added to run.json's counts first."""
        manifest, settings = self.manifest, self.settings
        models = self._judge_models()
        judged = {role: counted for role, counted in counters.items() if models.get(role)}
        for role, counted in judged.items():
            manifest.add_counts(role, counted.as_dict())
        if judged:
            manifest.save(self.directory.manifest_path)
        summary = self.summary.summary(
            ScoringSettings.model_validate(
                {**settings.as_dict(), "scoring_id": settings.scoring_id()}
            ),
            RunFacts(
                model=manifest.config.candidate.model,
                k=manifest.config.k,
                status=manifest.status,
                units=manifest.units,
                partial=manifest.status == "interrupted",
            ),
            manifest.labels,
            warnings,
            self._spent(models),
        )
        write_document(self.directory.summary_path, summary)
        return ScoreOutcome(summary, {role: c.as_dict() for role, c in judged.items()}, self.kept)

    def _spent(self, judge_models: dict[str, str]) -> dict[str, RoleSpend]:
        """What the run has spent by role: the candidate from its answers, the judges from
        their counts in run.json at the price of ``judge_models``."""
        manifest, config = self.manifest, self.config
        if config is None:
            source = manifest.config.config_file
            config = load_model_config(Path(source) if source else None)
        prices = PriceTable(config.prices)
        return replay_spend(self.directory, manifest, prices, judge_models)

    def _judge_models(self) -> dict[str, str]:
        """The model of each judge role of this scoring."""
        roles = {"judge": self.settings.judge, "fallback_judge": self.settings.fallback_judge}
        return {name: role.model for name, role in roles.items() if role is not None}
