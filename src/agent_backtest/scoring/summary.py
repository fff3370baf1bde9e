"""The summary of a scoring: agreement overall and by kind, node, tool, split, model and agent
version, each with its interval.

Only decided records (status ``scored``) enter agreement. Answers no judge decided get their own
figure, ``text_similarity``; unscored records and infrastructure errors (the candidate's, and the
judge's apart) are counted beside it, never as zeros. Every rate is a mean with a 95% interval
that accounts for sessions.

The summary is built one record at a time (:class:`SummaryBuilder`), so scoring keeps the sums
of a run, not its records: per session for the intervals, per unit only until its repeats are
in.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from agent_backtest.runs.estimate import MeanEstimate
from agent_backtest.runs.scores import ScoreRecord
from agent_backtest.runs.spending import RoleSpend
from agent_backtest.runs.summary import (
    NOT_RECORDED,
    Counts,
    GroupFigures,
    RepeatFigures,
    RunFacts,
    ScoringSettings,
    Summary,
    UndecidedBounds,
)
from agent_backtest.statistics import ClusteredMeans, agreement_of

GROUPINGS: dict[str, Callable[[ScoreRecord], str | None]] = {
    "kind": lambda r: r.kind,
    "node": lambda r: r.node or "(no node)",
    "tool": lambda r: r.golden_tool or "(text answer)",
    "split": lambda r: r.split,
    "model": lambda r: r.model,
    "agent_version": lambda r: r.agent_version or NOT_RECORDED,
}
TOOL_BLIND_MINIMUM = 5  # answers a tool-blindness sign must rest on before the warning
PROMPT_SHORTFALL = 0.5  # a median prompt-token ratio below this suggests the tools were dropped


def summarise(
    records: Iterable[ScoreRecord],
    settings: ScoringSettings,
    run: RunFacts,
    labels: Mapping[str, str],
    warnings: Sequence[str] = (),
    spent: Mapping[str, RoleSpend] | None = None,
) -> Summary:
    """The run's aggregates, with what it ``spent``."""
    builder = SummaryBuilder()
    for record in records:
        builder.add(record)
    return builder.summary(settings, run, labels, warnings, spent)


def coverage_warnings(records: Iterable[ScoreRecord]) -> list[str]:
    """What makes the headline cover less than it seems: undecided answers, a tool-blind
    candidate, answers that speak to the judge."""
    coverage = _Coverage()
    for record in records:
        coverage.add(record)
    return coverage.warnings()


class SummaryBuilder:
    """The summary of a scoring, fed one record at a time in any order.

    ``repeats`` (the run's k) lets a unit's repeat figures be settled as soon as its k-th
    record is in; without it every unit is held (a few fields) until :meth:`summary`.
    """

    def __init__(self, repeats: int | None = None) -> None:
        self.repeats = repeats
        self.statuses: Counter[str] = Counter()
        self.infra_errors_by_kind: Counter[str] = Counter()
        self.judge_errors_by_kind: Counter[str] = Counter()
        self.sessions: set[str] = set()
        self.means = ClusteredMeans()
        self.infra_error_rate = self.means.mean()
        self.overall = _Group(self.means)
        self.text_similarity = self.means.mean()
        self.buckets: Counter[str] = Counter()
        self.methods: Counter[str] = Counter()
        self.groups: dict[str, dict[str, _Group]] = {name: {} for name in GROUPINGS}
        self.topic_agreement = self.means.mean()
        self.coverage = _Coverage()
        self.units = _RepeatFigures(self.means)
        self._open: dict[str, _Unit] = {}
        self._profiles: dict[tuple[str | None, ...], _Profile] = {}

    def add(self, record: ScoreRecord) -> None:
        """Count one score record."""
        session = self.means.cluster(record.session_id)
        self.statuses[record.status] += 1
        self.sessions.add(record.session_id)
        self.means.add(self.infra_error_rate, float(record.status == "infra_error"), session)
        if record.bucket:
            self.buckets[record.bucket] += 1
        if record.status == "infra_error" and record.error_kind:
            self.infra_errors_by_kind[record.error_kind] += 1
        elif record.status == "judge_error" and record.error_kind:
            self.judge_errors_by_kind[record.error_kind] += 1
        elif record.status == "no_judge":
            self.means.add(self.text_similarity, record.similarity or 0.0, session)
        elif record.status == "scored":
            self._add_decided(record, session)
        self.coverage.add(record)
        self._add_repeat(record, session)

    def _add_decided(self, record: ScoreRecord, session: int) -> None:
        labels = (
            record.kind,
            record.node,
            record.golden_tool,
            record.split,
            record.model,
            record.agent_version,
        )
        profile = self._profiles.get(labels)
        if profile is None:
            profile = self._profiles[labels] = self._profile(record)
        self.means.add_to(profile.agreement, record.score or 0.0, session)
        self.means.add_to(profile.strict, float(bool(record.strict)), session)
        if record.bucket:
            profile.buckets[record.bucket] += 1
        if record.method:
            self.methods[record.method] += 1
        if record.topic_match is not None:
            self.means.add(self.topic_agreement, float(record.topic_match), session)

    def _profile(self, record: ScoreRecord) -> _Profile:
        """The groups a decided record like ``record`` counts in: overall and one of each
        grouping (the same for every record with its labels)."""
        groups = [self.overall]
        for name, key in GROUPINGS.items():
            label = key(record)
            if label is not None:
                group = self.groups[name].get(label)
                if group is None:
                    group = self.groups[name][label] = _Group(self.means)
                groups.append(group)
        return _Profile(
            groups,
            self.means.combination(group.agreement for group in groups),
            self.means.combination(group.strict for group in groups),
        )

    def _add_repeat(self, record: ScoreRecord, session: int) -> None:
        if self.repeats == 1:  # one answer a unit: no repeat figures to keep, only the count
            self.units.units += 1
            return
        unit = self._open.get(record.unit_id)
        if unit is None:
            unit = self._open[record.unit_id] = _Unit(session)
        unit.add(record)
        if self.repeats is not None and unit.answers >= self.repeats:
            self.units.add(self._open.pop(record.unit_id))

    def summary(
        self,
        settings: ScoringSettings,
        run: RunFacts,
        labels: Mapping[str, str],
        warnings: Sequence[str] = (),
        spent: Mapping[str, RoleSpend] | None = None,
    ) -> Summary:
        """The summary of every record added, with what the run ``spent``; call once."""
        for unit in self._open.values():
            self.units.add(unit)
        self._open.clear()
        for profile in self._profiles.values():
            for group in profile.groups:
                group.buckets.update(profile.buckets)
        estimates = [MeanEstimate.of(e) for e in self.means.estimates()]
        statuses = self.statuses
        counts = Counts(
            records=statuses.total(),
            decided=statuses["scored"],
            no_judge=statuses["no_judge"],
            unscored=statuses["unscored"],
            infra_errors=statuses["infra_error"],
            infra_errors_by_kind=_sorted(self.infra_errors_by_kind),
            judge_errors=statuses["judge_error"],
            judge_errors_by_kind=_sorted(self.judge_errors_by_kind),
            units=self.units.units,
            sessions=len(self.sessions),
        )
        overall = self.overall.figures(estimates)
        return Summary(
            scoring=settings,
            run=run,
            labels=dict(sorted(labels.items())),
            warnings=[*warnings, *self.coverage.warnings()],
            counts=counts,
            infra_error_rate=estimates[self.infra_error_rate],
            overall=overall,
            text_similarity=estimates[self.text_similarity],
            buckets=_sorted(self.buckets),
            methods=_sorted(self.methods),
            suspected_injection=self.coverage.injected,
            **{
                f"by_{name}": {label: groups[label].figures(estimates) for label in sorted(groups)}
                for name, groups in self.groups.items()
            },
            topic_agreement=estimates[self.topic_agreement],
            repeats=self.units.figures(estimates),
            undecided_bounds=UndecidedBounds.of(counts, overall),
            spent=dict(spent or {}),
        )


class _Group:
    """Agreement (mean lenient score) and strict agreement of a set of decided records."""

    def __init__(self, means: ClusteredMeans) -> None:
        self.agreement, self.strict = means.mean(), means.mean()
        self.buckets: Counter[str] = Counter()

    def figures(self, estimates: list[MeanEstimate]) -> GroupFigures:
        """The group's figures, with intervals, from the builder's ``estimates``."""
        return GroupFigures(
            agreement=estimates[self.agreement],
            strict=estimates[self.strict],
            buckets=_sorted(self.buckets),
        )


@dataclass
class _Profile:
    """The groups of decided records with the same labels, and what they add up."""

    groups: list[_Group]
    agreement: int
    """The combination of the groups' agreement means (a value is added to all at once)."""
    strict: int
    """The combination of their strict means."""
    buckets: Counter[str] = field(default_factory=Counter)
    """The buckets of these records, counted in each group by :meth:`SummaryBuilder.summary`."""


@dataclass
class _Unit:
    """What the repeat figures need of one unit's records."""

    session: int
    """The number of its session in the builder's means."""
    answers: int = 0
    scored: int = 0
    strict: int = 0
    signatures: list[str] = field(default_factory=list)

    def add(self, record: ScoreRecord) -> None:
        """Count one of the unit's records."""
        self.answers += 1
        if record.answer_signature:
            self.signatures.append(record.answer_signature)
        if record.status == "scored":
            self.scored += 1
            self.strict += bool(record.strict)


class _RepeatFigures:
    """With k ≥ 2 repeats: how often a unit's answers agree with each other, and pass^k.

    Consistency is the share of pairs of a unit's answered repeats with the same normalised
    answer; pass^k is the share of units whose every repeat is a strict match.
    """

    def __init__(self, means: ClusteredMeans) -> None:
        self.means = means
        self.units = 0
        self.k = 0
        self.consistency, self.passes = means.mean(), means.mean()

    def add(self, unit: _Unit) -> None:
        """Count one unit whose records are all in."""
        self.units += 1
        self.k = max(self.k, unit.answers)
        value = agreement_of(unit.signatures)
        if value is not None:
            self.means.add(self.consistency, value, unit.session)
        if unit.scored and unit.scored == unit.answers:
            self.means.add(self.passes, float(unit.strict == unit.scored), unit.session)

    def figures(self, estimates: list[MeanEstimate]) -> RepeatFigures | None:
        """The figures; None unless some unit has two repeats or more."""
        if self.k < 2:
            return None
        return RepeatFigures(
            k=self.k,
            consistency=estimates[self.consistency],
            pass_all_repeats_strict=estimates[self.passes],
        )


class _Coverage:
    """The signs that the headline covers less than it seems, counted record by record."""

    def __init__(self) -> None:
        self.unscored = 0
        self.judge_errors: Counter[str] = Counter()
        self.expected_tools = 0
        self.candidate_called = False
        self.injected = 0
        self.ratios = array("d")  # 8 bytes an answer: the median needs them all

    def add(self, record: ScoreRecord) -> None:
        """Count one record."""
        self.unscored += record.status == "unscored"
        if record.status == "judge_error":
            self.judge_errors[record.error_kind or "judge_error"] += 1
        self.injected += bool(record.suspected_injection)
        if record.status == "infra_error":
            return
        self.expected_tools += record.golden_tool is not None
        self.candidate_called = self.candidate_called or bool(record.candidate_tool)
        if record.input_tokens_ratio is not None:
            self.ratios.append(record.input_tokens_ratio)

    def warnings(self) -> list[str]:
        """The warnings, in a fixed order."""
        warnings = []
        if self.unscored:
            warnings.append(
                f"{self.unscored} answers the judge could not score are left out of agreement: "
                "it covers only the answers decided"
            )
        if self.judge_errors:
            kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(self.judge_errors.items()))
            warnings.append(
                f"{self.judge_errors.total()} answers are undecided because the judge could not "
                f"be asked ({kinds}): an outage, not a verdict; agreement covers only the "
                "answers decided (abt score again once the judge is back)"
            )
        if self.expected_tools >= TOOL_BLIND_MINIMUM and not self.candidate_called:
            warnings.append(
                f"the candidate never called a tool, over {self.expected_tools} answers where "
                "production did: the endpoint may be dropping the tools (some servers ignore "
                "`tools` unless started with a tool-calling chat format)"
            )
        ratios = sorted(self.ratios)
        if len(ratios) >= TOOL_BLIND_MINIMUM and ratios[len(ratios) // 2] < PROMPT_SHORTFALL:
            warnings.append(
                f"the candidate reported a median {ratios[len(ratios) // 2]:.2f} of "
                f"production's prompt tokens for the same requests ({len(ratios)} answers): "
                "the endpoint may be dropping the tools or part of the prompt"
            )
        if self.injected:
            warnings.append(
                f"{self.injected} answers hold text aimed at the judge (suspected_injection): "
                "read them before trusting their verdicts"
            )
        return warnings


def _sorted(counts: Counter[str]) -> dict[str, int]:
    """The counts sorted by label."""
    return dict(sorted(counts.items()))
