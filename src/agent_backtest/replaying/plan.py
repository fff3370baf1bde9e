"""A replay checked before anything is written or paid for.

:func:`plan_replay` makes every check a replay can fail (the output directory, the patch, every
model the run will call and its key, the judges, the units themselves and the agent config's
gold file against them) and returns a
:class:`ReplayPlan`. The selected units are streamed to a private temporary file while they are
checked, so traces are read once, and the candidate's cache is asked for their answers on the
way (:mod:`.cached`); nothing lands in the output directory until the plan is executed, and a
failed check leaves nothing behind.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agent_backtest.errors import InputError, UserError
from agent_backtest.providers import ModelConfig, ModelRef, parse_model_ref
from agent_backtest.providers.prices import PriceTable
from agent_backtest.providers.roles import check_judges, check_role
from agent_backtest.replaying.cached import CachedAnswers
from agent_backtest.replaying.cost_estimate import CostEstimate
from agent_backtest.replaying.jobs import model_of
from agent_backtest.runs import ResultRecord, RunDirectory
from agent_backtest.runs.manifest import (
    ExclusionRecord,
    InputFile,
    PatchSettings,
    ReaderAccounting,
    ReplaySettings,
    describe_input,
)
from agent_backtest.runs.manifest_base import describe_inputs, recorded_inputs
from agent_backtest.trace import dump_record
from agent_backtest.units import Selection, Unit
from agent_backtest.units.gold import UNSATISFIABLE, GoldCheck
from agent_backtest.units.source import UnitSource

if TYPE_CHECKING:  # a patched run's only: loaded when --patch is given
    from agent_backtest.patch import CoverageReport, Patch, PatchCoverage

JUDGE_ROLES = ("judge", "fallback_judge")
WRITE_BUFFER = 1 << 20
"""Bytes of units gathered before each write: a units line (often 20 KB) is larger than the
default buffer, which would make each line a system call of its own."""


@dataclass
class ReplayPlan:
    """A replay that passed every check; :meth:`discard` if it is not going to run."""

    directory: RunDirectory
    settings: ReplaySettings
    config: ModelConfig
    inputs: list[InputFile]
    units_file: Path
    units: int
    sessions: int
    candidates: set[ModelRef]
    cost: CostEstimate
    overwrite: bool = False
    labels: dict[str, str] = field(default_factory=dict)
    patch: Patch | None = None
    coverage: CoverageReport | None = None
    readers: ReaderAccounting | None = None
    warnings: list[str] = field(default_factory=list)
    answers: CachedAnswers | None = None
    """The pairs the candidate's cache answered while the units were read."""

    def discard(self) -> None:
        """Remove the temporary files (the units file, once moved into the run, stays)."""
        self.units_file.unlink(missing_ok=True)
        if self.answers is not None:
            self.answers.discard()


def check_output(directory: RunDirectory, overwrite: bool) -> None:
    """The output directory can take a new run."""
    if directory.path.exists() and not directory.path.is_dir():
        raise UserError(f"{directory.path} is a file, not a directory: name another --out", "out")
    if directory.holds_run() and not overwrite:
        raise UserError(
            f"{directory.path} already holds a run: finish it with abt replay --resume "
            f"{directory.path}, or choose another --out, or pass --overwrite",
            "out",
        )


def plan_replay(
    out: Path,
    settings: ReplaySettings,
    config: ModelConfig,
    source: UnitSource,
    selection: Selection,
    *,
    patch_file: Path | None = None,
    allow_unmatched: bool = False,
    overwrite: bool = False,
    labels: dict[str, str] | None = None,
    verify_inputs: bool = False,
    judge_repeats: int = 1,
    on_cached_answer: Callable[[int, Unit, ResultRecord], None] | None = None,
) -> ReplayPlan:
    """Check everything a replay needs, reading the inputs once; see the module docstring.

    An input the run in ``out`` (being overwritten) recorded with the same size and
    modification time keeps its recorded sha256; ``verify_inputs`` hashes every input again.
    ``judge_repeats``: times scoring will ask the judge per answer, for the cost estimate.
    The answers the candidate's cache holds are found as the units are read (see
    :mod:`.cached`), each handed to ``on_cached_answer`` with its unit's place and the unit."""
    directory = RunDirectory(out)
    check_output(directory, overwrite)
    candidate = settings.candidate
    judges = [role for name, role in settings.roles.items() if name in JUDGE_ROLES]
    patch = _load_patch(patch_file) if patch_file is not None else None
    if patch is not None and patch_file is not None:
        settings.patch = PatchSettings(
            file=patch_file.name,
            ops=patch.op_ids(),
            sha256=describe_input(patch_file).sha256,
            allow_unmatched=allow_unmatched,
        )
    fixed = set() if candidate.is_trace else {candidate.ref}
    fixed |= {parse_model_ref(name, "patch_file") for name in patch.models()} if patch else set()
    check_role(candidate, fixed, config)
    warnings = check_judges(judges, [str(ref) for ref in fixed], config) if fixed else []
    known = [] if verify_inputs else recorded_inputs(directory.manifest_path)
    answers = _cached_answers(settings, config, on_cached_answer)
    try:
        plan = _scan(
            directory, settings, config, source, selection, patch, known, judge_repeats, answers
        )
    except BaseException:
        if answers is not None:
            answers.discard()
        raise
    try:
        new = plan.candidates - fixed
        check_role(candidate, new, config)
        warnings += check_judges(judges, [str(ref) for ref in new], config) if new else []
        _check_coverage(plan, patch_file)
    except BaseException:
        plan.discard()
        raise
    plan.overwrite, plan.labels = overwrite, dict(labels or {})
    plan.warnings = [*plan.warnings, *warnings]
    return plan


def _scan(
    directory: RunDirectory,
    settings: ReplaySettings,
    config: ModelConfig,
    source: UnitSource,
    selection: Selection,
    patch: Patch | None,
    known_inputs: list[InputFile],
    judge_repeats: int,
    answers: CachedAnswers | None = None,
) -> ReplayPlan:
    """Select the units into a private temporary file, noting each unit's model and patch,
    and looking up the ``answers`` the cache holds."""
    coverage = _coverage_of(patch) if patch is not None else None
    gold = settings.agent.answer_keys
    check = GoldCheck(Path(gold), settings.reading.strict) if gold else None
    candidates: set[ModelRef] = set()
    sessions: set[str] = set()
    count = 0
    judge = settings.roles.get("judge")
    cost = CostEstimate(
        PriceTable(config.prices),
        settings.k,
        judge.model if judge else None,
        bool(settings.batch),
        judge_repeats,
    )
    fd, name = tempfile.mkstemp(prefix="abt-units-", suffix=".jsonl")  # mode 0600
    try:
        with os.fdopen(fd, "wb", buffering=WRITE_BUFFER) as handle:
            # The gold file's keys are checked against every unit of the inputs, selected or
            # not: a key naming a unit the selection leaves out is not a mistake.
            for unit in selection.apply(check.watch(source) if check else source):
                handle.write(_unit_line(unit, source, selection))
                count += 1
                sessions.add(unit.session_id)
                patched = patch.apply(unit) if patch is not None else None
                model = model_of(unit, patched, settings.candidate.model, config)
                candidates.add(model)
                cached = answers.look_up(count - 1, unit, model, patched) if answers else 0
                sent_as = patched.request if patched and patched.changed else None
                cost.add(unit, model, sent_as, cached)
                if coverage is not None:
                    coverage.add(unit)
        if count == 0:
            raise InputError(
                source.inputs[0],
                None,
                "no units to replay (see abt ingest for what the inputs hold, and the "
                "selection flags)",
            )
        if check is not None:
            selection.dropped[UNSATISFIABLE] += len(check.unusable)
            check.finish(f"the {sum(selection.dropped.values()) + count:,} units of the inputs")
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    if answers is not None:
        answers.close()
    _record_selection(settings, selection, source)
    gold_warning = check.warning() if check is not None else None
    return ReplayPlan(
        directory=directory,
        settings=settings,
        config=config,
        inputs=describe_inputs(source.inputs, known_inputs),
        units_file=Path(name),
        units=count,
        sessions=len(sessions),
        candidates=candidates,
        cost=cost,
        patch=patch,
        coverage=_coverage_report(coverage, settings.patch),
        readers=None if source.from_units_file else _accounting(source),
        warnings=[gold_warning] if gold_warning else [],
        answers=answers,
    )


def _cached_answers(
    settings: ReplaySettings,
    config: ModelConfig,
    on_answer: Callable[[int, Unit, ResultRecord], None] | None,
) -> CachedAnswers | None:
    """The look-up of the answers the candidate's cache holds, for a run that sends its calls
    one by one (a dry run sends none; batches are not looked up one by one)."""
    if settings.dry_run or settings.batch is not None:
        return None
    role, k, seed = settings.candidate, settings.k, settings.seed
    return CachedAnswers.open(role, config, k, seed, on_answer)


def _unit_line(unit: Unit, source: UnitSource, selection: Selection) -> bytes:
    """The line of units.jsonl that holds ``unit``: the input's own line when the unit is
    unchanged (the selection passes units on as they come, so the source's last line is this
    unit's; one that labels splits changes them), else the unit serialised."""
    line = source.verbatim_line if selection.val_fraction is None else None
    if line is None:
        return dump_record(unit) + b"\n"
    return line if line.endswith(b"\n") else line + b"\n"


def _coverage_report(
    coverage: PatchCoverage | None, settings: PatchSettings | None
) -> CoverageReport | None:
    if coverage is None or settings is None:
        return None
    return coverage.report(settings.file, settings.sha256)


def _record_selection(settings: ReplaySettings, selection: Selection, source: UnitSource) -> None:
    """What the selection left out, in the settings run.json records."""
    settings.selection.dropped = dict(sorted(selection.dropped.items()))
    settings.selection.reclassified = source.reclassified
    exclusion = selection.exclusion()
    if exclusion is not None:
        settings.selection.excluded = ExclusionRecord(
            file=exclusion.file, sessions=exclusion.sessions, matched=exclusion.matched
        )


def _accounting(source: UnitSource) -> ReaderAccounting:
    return ReaderAccounting(
        sessions=source.sessions(),
        skipped_steps=dict(sorted(source.skipped_steps().items())),
        skipped_records=dict(sorted(source.skipped_records().items())),
        duplicate_sessions=source.duplicate_sessions(),
    )


def _check_coverage(plan: ReplayPlan, patch_file: Path | None) -> None:
    """An op that matches nothing stops the run, unless the settings allow it."""
    report, settings = plan.coverage, plan.settings.patch
    if report is None or settings is None or not report.unmatched or settings.allow_unmatched:
        return
    why = {op.id: op.message for op in report.ops}
    names = ", ".join(
        f"{op_id!r} ({why[op_id]})" if why.get(op_id) else repr(op_id) for op_id in report.unmatched
    )
    raise InputError(
        patch_file or settings.file,
        None,
        f"{len(report.unmatched)} patch op(s) matched nothing: {names}; nothing was written "
        "or sent (abt patch check shows more; --allow-unmatched replays anyway)",
    )


def move_units_into(plan: ReplayPlan) -> None:
    """Put the planned units in the run directory as units.jsonl (0600)."""
    shutil.move(plan.units_file, plan.directory.units_path)
    os.chmod(plan.directory.units_path, 0o600)


def _load_patch(path: Path) -> Patch:
    """The patch in ``path`` (its module loads only for a patched run)."""
    from agent_backtest.patch import load_patch

    return load_patch(path)


def _coverage_of(patch: Patch) -> PatchCoverage:
    """An empty tally of which units each of ``patch``'s ops matched."""
    from agent_backtest.patch import PatchCoverage

    return PatchCoverage(patch)
