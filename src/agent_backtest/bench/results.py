"""The results of a bench run: pass^k and pass@k, rewards, errors and costs, each with its count.

A rollout **passes** when its reward is 1: every reward component held (τ-bench's reading).
Episodes that ended in an engineering error (``EpisodeRecord.error``, or a grade without a
reward) have no reward: they are left out of every mean and counted by kind, never as zeros.
Every mean is over episodes clustered by case (rollouts of one case are not independent draws);
pass^k and pass@k have one value per case with at least k graded rollouts, and each figure says
how many cases it rests on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar, Literal

import orjson
from pydantic import Field

from agent_backtest.bench.csv_export import write_episodes_csv
from agent_backtest.bench.models import EpisodeRecord, GradeRecord
from agent_backtest.bench.page import write_page
from agent_backtest.bench.reading import BenchRun, RunFacts, error_kind, passed, read_run
from agent_backtest.record_model import StrictModel, TaggedRecord, schema_tag
from agent_backtest.reporting.passk import over_cases
from agent_backtest.runs import private_atomic_writer
from agent_backtest.runs.estimate import ClusteredMean
from agent_backtest.statistics import Estimate, clustered_average, clustered_mean

SUMMARY_SCHEMA = "abt.bench_summary/1"
SUMMARY_FILE = "summary.json"
CSV_FILE = "results.csv"
PAGE_FILE = "report.html"

# Per-episode quantities averaged in the summary, and how each is read from a record.
COSTS: dict[str, Callable[[EpisodeRecord], float | None]] = {
    "seconds": lambda e: e.seconds,
    "steps": lambda e: e.steps,
    "tool_calls": lambda e: e.tool_calls,
    "model_calls": lambda e: e.model_calls,
    "input_tokens": lambda e: e.input_tokens,
    "output_tokens": lambda e: e.output_tokens,
}


class CaseMean(ClusteredMean):
    """A mean over episodes or cases, clustered by case."""

    CLUSTERS: ClassVar[str] = "cases"
    cases: int = Field(description="How many cases those values come from.")


class ComponentFigure(StrictModel):
    """One reward component's mean over the episodes it graded, and how many it could not."""

    mean: CaseMean
    not_graded: int = Field(description="Episodes whose grader returned no value: not zeros.")


class EpisodeCounts(StrictModel):
    """How many episodes the figures rest on, and why the others are not in them: each episode
    is graded, an error or ungraded, so those three add up to ``episodes``."""

    episodes: int = Field(description="Episodes recorded in episodes.jsonl.")
    graded: int = Field(description="Episodes with a reward: the ones in the means.")
    passed: int = Field(description="Graded episodes whose reward is 1.")
    errors: int = Field(description="Engineering errors: no reward, left out of the means.")
    errors_by_kind: dict[str, int] = Field(default_factory=dict)
    ungraded: int = Field(description="Episodes without a grade record yet.")
    cases: int = Field(description="Cases with at least one graded rollout.")
    rollouts_per_case: dict[str, int] = Field(
        default_factory=dict, description="Graded rollouts of a case → how many cases have so many."
    )


class BenchSummary(TaggedRecord):
    """``summary.json`` of a bench run."""

    schema_: Literal["abt.bench_summary/1"] = schema_tag(SUMMARY_SCHEMA)
    run: RunFacts
    counts: EpisodeCounts
    pass_hat_k: dict[str, CaseMean] = Field(
        description="k → the chance that k rollouts of a case all pass, over cases with ≥ k."
    )
    pass_at_k: dict[str, CaseMean] = Field(
        description="k → the chance that some one of k rollouts passes, over cases with ≥ k."
    )
    reward: CaseMean = Field(description="Mean reward of the graded episodes.")
    components: dict[str, ComponentFigure] = Field(default_factory=dict)
    per_episode: dict[str, CaseMean] = Field(
        default_factory=dict,
        description="Mean seconds, steps, tool calls, model calls and tokens of a graded episode "
        "(the interval is mean ± t standard errors); a count no episode recorded is missing.",
    )
    warnings: list[str] = Field(default_factory=list)


def summarise(run: BenchRun) -> BenchSummary:
    """The summary of a read bench run."""
    graded, errors, ungraded = _sorted_out(run)
    rewards = [(e.case_id, g.reward) for e, g in graded if g.reward is not None]
    cases = [case for case, _ in rewards]
    counts = _pass_counts(graded)
    most = max((n for _, n in counts.values()), default=0)
    summary = BenchSummary(
        run=run.facts,
        counts=EpisodeCounts(
            episodes=len(run.episodes),
            graded=len(graded),
            passed=sum(s for s, _ in counts.values()),
            errors=sum(errors.values()),
            errors_by_kind=dict(sorted(errors.items())),
            ungraded=ungraded,
            cases=len(counts),
            rollouts_per_case={
                str(n): cases_with
                for n, cases_with in sorted(Counter(n for _, n in counts.values()).items())
            },
        ),
        pass_hat_k={str(k): CaseMean.of(over_cases(counts, k)) for k in range(1, most + 1)},
        pass_at_k={str(k): CaseMean.of(over_cases(counts, k, at=True)) for k in range(1, most + 1)},
        reward=CaseMean.of(clustered_mean([reward for _, reward in rewards], cases)),
        components=_components(graded),
        per_episode={
            name: CaseMean.of(_average([(e, read(e)) for e, _ in graded]))
            for name, read in COSTS.items()
        },
    )
    summary.warnings = _warnings(run, summary)
    return summary


def _sorted_out(
    run: BenchRun,
) -> tuple[list[tuple[EpisodeRecord, GradeRecord]], Counter[str], int]:
    """The graded episodes with their grades, the errors by kind, and how many have no grade."""
    graded: list[tuple[EpisodeRecord, GradeRecord]] = []
    errors: Counter[str] = Counter()
    ungraded = 0
    for episode in run.episodes:
        grade = run.grade(episode)
        kind = error_kind(episode, grade)
        if kind is not None:
            errors[kind] += 1
        elif grade is None:
            ungraded += 1
        else:
            graded.append((episode, grade))
    return graded, errors, ungraded


def _pass_counts(graded: Sequence[tuple[EpisodeRecord, GradeRecord]]) -> dict[str, tuple[int, int]]:
    """{case: (passes, graded rollouts)} in the order cases first appear."""
    counts: dict[str, tuple[int, int]] = {}
    for episode, grade in graded:
        successes, rollouts = counts.get(episode.case_id, (0, 0))
        counts[episode.case_id] = (successes + bool(passed(grade.reward)), rollouts + 1)
    return counts


def _components(graded: Sequence[tuple[EpisodeRecord, GradeRecord]]) -> dict[str, ComponentFigure]:
    """Each component's mean over the episodes it graded, in the order they first appear."""
    names = list(dict.fromkeys(name for _, grade in graded for name in grade.components))
    figures = {}
    for name in names:
        values = [(e.case_id, g.components.get(name)) for e, g in graded]
        kept = [(case, value) for case, value in values if value is not None]
        figures[name] = ComponentFigure(
            mean=CaseMean.of(clustered_mean([v for _, v in kept], [c for c, _ in kept])),
            not_graded=len(values) - len(kept),
        )
    return figures


def _average(values: Sequence[tuple[EpisodeRecord, float | None]]) -> Estimate:
    """The clustered mean of the values that were recorded (a missing count is not a zero)."""
    kept = [(episode.case_id, float(value)) for episode, value in values if value is not None]
    return clustered_average([v for _, v in kept], [c for c, _ in kept])


def _warnings(run: BenchRun, summary: BenchSummary) -> list[str]:
    """Everything that qualifies the numbers."""
    found = []
    status = run.facts.status
    if status not in ("completed", "completed_with_errors"):
        found.append(
            f"the run is {status or 'without a status'}: these numbers cover the episodes "
            "that were recorded"
        )
    counts = summary.counts
    if counts.ungraded:
        found.append(
            f"{counts.ungraded} episodes have no grade yet (grades are written once every "
            "rollout has ended): they are not in these numbers"
        )
    if len(counts.rollouts_per_case) > 1:
        spread = ", ".join(f"{c} with {n}" for n, c in counts.rollouts_per_case.items())
        found.append(
            f"cases have unequal numbers of graded rollouts ({spread}): pass^k and pass@k "
            "leave out the cases with fewer than k; each figure says how many cases it rests on"
        )
    if counts.errors:
        found.append(
            f"{counts.errors} episodes ended in an engineering error: no reward, left out of "
            "the means (see errors by kind)"
        )
    return found


def write_results(run: Path, allow_partial: bool = False) -> BenchSummary:
    """(Re)write ``summary.json``, ``results.csv`` and ``report.html`` into a bench run."""
    read = read_run(run, allow_partial=allow_partial)
    summary = summarise(read)
    document = summary.model_dump(mode="json", by_alias=True)
    with private_atomic_writer(run / SUMMARY_FILE) as handle:
        handle.write(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    write_episodes_csv(read, run / CSV_FILE)
    with private_atomic_writer(run / PAGE_FILE) as handle:
        write_page(handle, read, summary)
    return summary
