"""Figures of a group's annotated runs: cases, revisions, repair turns, task time, verdicts.

A run counts once per group even when several of its sessions are in the group. A run whose
annotation lacks a figure (no repair turns, no task timing) is missing for that figure.
"""

from __future__ import annotations

from collections import Counter

from agent_backtest.profiling.cases import RunAnnotation
from agent_backtest.profiling.distribution import Distribution, Tally
from agent_backtest.runs.profile import AnnotatedRuns, RepairTurns

TASK_VERDICTS = ("pass", "fail", "unavailable")
VALIDATION_VERDICTS = ("pass", "fail", "not_required", "unavailable")


class RunFigures:
    """Accumulates the annotated runs of one group."""

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.cases: set[str] = set()
        self.revisions: set[str] = set()
        self.variants: set[str] = set()
        self.repair_total = Tally("runs", integral=True)
        self.repair_by_reason: Counter[str] = Counter()
        self.task_time = Distribution("runs")
        self.task_verdicts: Counter[str] = Counter()
        self.validation_verdicts: Counter[str] = Counter()
        self.sessions_annotated = 0
        self.sessions_not_annotated = 0

    def add(self, annotation: RunAnnotation | None) -> None:
        """A session of the group and its run's annotation (None when it has none)."""
        if annotation is None:
            self.sessions_not_annotated += 1
            return
        self.sessions_annotated += 1
        if id(annotation) in self.seen:
            return
        self.seen.add(id(annotation))
        self.cases.add(annotation.case_id)
        self.revisions.add(annotation.base_revision)
        self.variants.add(annotation.variant)
        self._outcome(annotation)

    def _outcome(self, annotation: RunAnnotation) -> None:
        """Add a run's repair turns, task time and verdicts."""
        repairs = annotation.repair_turns
        if repairs is None:
            self.repair_total.lack("have no repair turn count")
        else:
            self.repair_total.add(repairs.total)
            self.repair_by_reason.update(repairs.by_reason)
        timing = annotation.task_timing
        if timing is None:
            self.task_time.lack("have no task timing")
        else:
            self.task_time.add(float(timing.ended_at_ms - timing.started_at_ms))
        verdicts = annotation.correctness
        self.task_verdicts[verdicts.task_verdict if verdicts else "not_annotated"] += 1
        self.validation_verdicts[verdicts.validation_verdict if verdicts else "not_annotated"] += 1

    def figures(self) -> AnnotatedRuns:
        """The group's run figures."""
        return AnnotatedRuns(
            runs=len(self.seen),
            sessions_annotated=self.sessions_annotated,
            sessions_not_annotated=self.sessions_not_annotated,
            cases=sorted(self.cases),
            variants=sorted(self.variants),
            base_revisions=sorted(self.revisions),
            repair_turns=RepairTurns(
                total=self.repair_total.figure(),
                by_reason=dict(sorted(self.repair_by_reason.items())),
            ),
            task_time_ms=self.task_time.figure(),
            task_verdicts=_verdicts(self.task_verdicts, TASK_VERDICTS),
            validation_verdicts=_verdicts(self.validation_verdicts, VALIDATION_VERDICTS),
        )


def _verdicts(counts: Counter[str], names: tuple[str, ...]) -> dict[str, int]:
    """Every verdict with its count, zeros included, so groups line up."""
    return {name: counts[name] for name in (*names, "not_annotated")}
