"""``abt replay``: send every selected unit to a candidate model and record the answers."""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from agent_backtest.api import (
    AgentOptions,
    BatchOptions,
    CallOptions,
    ExecutorOptions,
    JudgeOptions,
    ReadingOptions,
    SelectionOptions,
)
from agent_backtest.api.events import RunEvents
from agent_backtest.cli.errors import INTERRUPTED
from agent_backtest.cli.flags import flag, with_groups
from agent_backtest.cli.options import (
    CALLS,
    INPUTS,
    OUTPUT,
    ROLES,
    SCORING,
    ReplayInputs,
)
from agent_backtest.cli.roles import JudgeFlags
from agent_backtest.cli.run_output import RunOutput
from agent_backtest.cli.status import PhaseStatus
from agent_backtest.cli.terminal import SafeConsole, one_line, print_warnings
from agent_backtest.errors import UserError

if TYPE_CHECKING:
    from agent_backtest import Run
    from agent_backtest.executors import ExecutorStatus
    from agent_backtest.replaying.cost_estimate import CostEstimate
    from agent_backtest.replaying.plan import ReplayPlan
    from agent_backtest.replaying.run import ReplayResult
    from agent_backtest.runs import ResultRecord
    from agent_backtest.runs.manifest import RunManifest
    from agent_backtest.scoring.run import ScoreOutcome

FAILED = 1
BUDGET_REACHED = 3


@dataclass
class ReplayFlags:
    """The candidate, the run to create or finish, the patch, and what else a replay does."""

    model: str | None = field(default=None, metadata=flag(ROLES, "MODEL"))
    """Candidate: provider/model (openai/…, anthropic/…, local/smollm2, mock/golden), or trace
    for the model that served each step."""
    resume: Path | None = field(default=None, metadata=flag(INPUTS, "DIR"))
    """Finish this run: send only the pairs with no result."""
    retry_errors: bool = field(default=False, metadata=flag(INPUTS))
    """With --resume: also send again the pairs that ended in an infrastructure error."""
    repair: bool = field(default=False, metadata=flag(INPUTS))
    """With --resume: rewrite a results file with torn lines in its middle, keeping every whole
    record."""
    patch_file: Path | None = field(default=None, metadata=flag(INPUTS, "FILE"))
    """Edit ops (abt.patch/1, JSON or YAML) applied to each unit's request before it is sent;
    the run stops before anything is written if an op matches nothing."""
    allow_unmatched: bool = field(default=False, metadata=flag(INPUTS))
    """With --patch: replay even when an op matches nothing."""
    verify_inputs: bool = field(default=False, metadata=flag(INPUTS))
    """Hash every input again, even one the run being overwritten recorded with the same size
    and modification time."""
    k: int = field(default=1, metadata=flag(CALLS, "N", min=1, max=1000))
    """Repeats per unit."""
    seed: int = field(default=0, metadata=flag(CALLS, "N"))
    """Seed of repeat 0; repeat r uses seed + r."""
    dry_run: bool = field(default=False, metadata=flag(CALLS))
    """Write units.jsonl and run.json, send nothing (the plan's cost estimate is printed)."""
    max_cost: float | None = field(default=None, metadata=flag(CALLS, "USD", min=0.000001))
    """Refuse a replay estimated above USD, and stop the run once it has spent USD
    (interrupted, reason budget; --resume finishes it)."""
    credential_command: str | None = field(default=None, metadata=flag(CALLS, "CMD"))
    """On HTTP 401, run CMD; it prints a fresh API key, and the call is sent again once."""
    no_score: bool = field(default=False, metadata=flag(SCORING))
    """Only record the answers; score later with abt score."""
    overwrite: bool = field(default=False, metadata=flag(OUTPUT))
    """Replace a run already in --out (its files are removed first)."""
    label: list[str] | None = field(default=None, metadata=flag(OUTPUT, "KEY=VALUE"))
    """Recorded in run.json and carried into the summary, CSV and report, to tell runs apart
    (repeatable)."""
    report: bool = field(default=False, metadata=flag(OUTPUT))
    """Once scored, write results.csv and report.html (as abt report does)."""


@with_groups()
def replay(
    output: RunOutput,
    reading: ReadingOptions,
    agent: AgentOptions,
    selection: SelectionOptions,
    calls: CallOptions,
    judges: JudgeFlags,
    judging: JudgeOptions,
    batching: BatchOptions,
    execution: ExecutorOptions,
    flags: ReplayFlags,
    inputs: ReplayInputs = None,
) -> None:
    """Replay units on a candidate model; every answer is recorded the moment it arrives, then
    the run is scored against production (as abt score does)."""
    # The replay machinery loads only when a replay runs, so --help stays fast.
    from agent_backtest.api import replays as api

    console = SafeConsole(stderr=True, highlight=False)
    events = ReplayEvents(console, batching.batch or _is_batch_run(flags.resume))
    if flags.report and (flags.no_score or flags.dry_run):
        raise UserError("needs a scored run: leave out --no-score and --dry-run", "report")
    common = dict(
        calls=calls,
        roles=judges.roles(),
        judging=judging,
        agent=agent,
        batching=batching,
        execution=execution,
        score=not flags.no_score,
        credential_command=flags.credential_command,
        max_cost=flags.max_cost,
        hooks=events,
    )
    if flags.resume is not None:
        if inputs or output.out or flags.model or flags.patch_file:
            raise UserError(
                "takes the run's own inputs, model and settings; pass only the run directory "
                "(and call settings)",
                "resume",
            )
        ignored = _given(reading, selection, flags, only=RUN_SETTINGS)
        # Refused rather than ignored: they meant something.
        if output.config_file is not None or ignored:
            name = "config_file" if output.config_file is not None else ignored[0]
            raise UserError("does nothing to a run you resume: leave it out", name)
        run = api.resume(
            flags.resume, retry_errors=flags.retry_errors, repair=flags.repair, **common
        )
    else:
        if flags.repair:
            raise UserError("rewrites the results of a run you resume: add --resume DIR", "repair")
        if not inputs or not flags.model or not output.out:
            raise UserError("give INPUT…, --model and --out (or --resume DIR)")
        run = api.replay(
            inputs,
            model=flags.model,
            out=output.out,
            k=flags.k,
            seed=flags.seed,
            reading=reading,
            selection=selection,
            patch_file=flags.patch_file,
            allow_unmatched=flags.allow_unmatched,
            labels=parse_labels(flags.label or []),
            config_file=output.config_file,
            overwrite=flags.overwrite,
            dry_run=flags.dry_run,
            verify_inputs=flags.verify_inputs,
            **common,
        )
    if flags.report and run.directory.is_scored():
        # Only --report writes the pages, whose machinery (every job's) is not loaded otherwise.
        from agent_backtest.api.reports import report as write_run_report

        written = write_run_report(run)
        SafeConsole(highlight=False).print(
            one_line(f"wrote {written.csv_path} ({written.rows} rows) and {written.html_path}"),
            markup=False,
        )
    if not flags.dry_run:
        print_local_model_hint(console, run)
    _exit_for(console, run, flags.dry_run)


def print_estimate(console: Console, estimate: CostEstimate) -> None:
    """The plan's estimated cost, one line per role."""
    for role, figures in estimate.roles().items():
        console.print(f"estimated cost, {role}: {figures.text()}", markup=False)


# What a run keeps from its start (run.json): flags a resume would not use.
RUN_SETTINGS = frozenset(
    {"k", "seed", "label", "allow_unmatched", "dry_run", "overwrite", "verify_inputs"}
    | {item.name for group in (ReadingOptions, SelectionOptions) for item in fields(group)}
)


def _given(*groups: object, only: frozenset[str]) -> list[str]:
    """The fields named in ``only`` of the flag groups that were set to other than their
    default."""
    given = []
    for group in groups:
        for item in fields(group):  # type: ignore[arg-type]
            default = item.default if item.default is not MISSING else item.default_factory()  # type: ignore[misc]
            value = getattr(group, item.name)
            if item.name in only and value != default and value not in (None, (), []):
                given.append(item.name)
    return given


def print_local_model_hint(console: Console, run: Run) -> None:
    """After a scored run on the embedded model: why it disagrees, and two runs worth comparing.

    The embedded model is tiny, so a first user's headline is usually an agreement near 0; this
    says that is expected, and names the pipeline check (production's own answers) and a hosted
    model over the same units.
    """
    manifest = run.manifest
    candidate = manifest.config.candidate.model
    finished = manifest.status in ("completed", "completed_with_errors")
    if not candidate.startswith("local/") or not finished or not run.directory.is_scored():
        return
    replay = f"{_program_name()} replay {run.directory.units_path}"
    console.print(
        f"{candidate} is a 135M-parameter model: disagreeing with production is "
        "expected of it. The same units:",
        f"  against production's own answers (agreement 1.000): {replay} --model mock/golden "
        f"--out {run.path}-golden",
        f"  on a hosted model, with OPENAI_API_KEY set: {replay} --model openai/gpt-4.1-mini "
        f"--out {run.path}-gpt-4.1-mini",
        sep="\n",
        markup=False,
        soft_wrap=True,
    )


def _program_name() -> str:
    """``abt`` as the user typed it (``.venv/bin/abt`` runs without an activated venv)."""
    typed = sys.argv[0] if sys.argv else ""
    return typed if Path(typed).name in ("abt", "agent-backtest") else "abt"


def _is_batch_run(resume: Path | None) -> bool:
    """The run to resume was started with --batch (a run that cannot be read says so later)."""
    if resume is None:
        return False
    from agent_backtest import Run

    try:
        return Run(resume).manifest.config.batch is not None
    except (OSError, ValueError, UserError):
        return False


def parse_labels(texts: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` flags as a dict; a malformed one is a user error."""
    labels = {}
    for text in texts:
        key, equals, value = text.partition("=")
        if not equals or not key.strip():
            raise UserError(f"{text!r} is not KEY=VALUE", "labels")
        labels[key.strip()] = value.strip()
    return labels


BAR_UPDATE_SECONDS = 0.1  # rich redraws a live bar ten times a second


class ReplayEvents(RunEvents):
    """The progress bar while the run goes, and what is printed when it ends."""

    def __init__(self, console: Console, batching: bool = False) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        super().__init__()
        self.console = console
        self.batching = batching
        self.errors: Counter[str] = Counter()
        self.progress = Progress(
            TextColumn("replay"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[errors]}"),
            TextColumn("{task.fields[calls]}"),
            console=console,
            transient=False,
        )
        self.task: int | None = None
        self.unshown = 0
        """Answers in since the bar was last updated."""
        self.executor: ExecutorStatus | None = None
        """The executor's status as last told, shown at the bar's next update."""
        self.next_update = 0.0
        self.status: PhaseStatus | None = None
        self.candidate = ""
        self.on_planned = self.planned
        self.on_start = self.started
        self.on_result = self.answered
        self.on_finish = self.finished
        self.on_progress = self.progressed
        self.on_scored = self.scored

    def planned(self, plan: ReplayPlan) -> None:
        print_warnings(self.console, plan.warnings)
        self.candidate = f" to {plan.settings.candidate.model}"
        readers = plan.readers
        if readers is not None:
            skipped = ", ".join(f"{k} {v}" for k, v in readers.skipped_steps.items())
            records = ", ".join(f"{k} {v}" for k, v in readers.skipped_records.items())
            self.console.print(
                f"read {readers.sessions} sessions, {plan.units} units selected · LLM steps "
                f"that gave no unit: {skipped or 'none'} · records skipped: "
                f"{records or 'none'} · sessions read twice: {readers.duplicate_sessions}",
                markup=False,
            )
        excluded = plan.settings.selection.excluded
        if excluded is not None:
            self.console.print(
                f"--exclude-sessions {excluded.file}: {excluded.matched} of its "
                f"{excluded.sessions} sessions are in the input",
                markup=False,
            )
        if plan.coverage is not None:
            from agent_backtest.cli.patch import print_coverage  # a patched run's only

            print_coverage(self.console, plan.coverage)
        print_estimate(self.console, plan.cost)

    def started(self, todo: int, done: int) -> None:
        if done:
            self.console.print(
                f"{done} (unit, repeat) pairs already have results; sending {todo}", markup=False
            )
        if self.batching:
            self.console.print(
                "sending in provider batches: answers can take up to 24 hours; the batches are "
                "recorded in run.json, so stop at any time and go on with abt replay --resume",
                markup=False,
            )
        self.task = self.progress.add_task("replay", total=todo, rate="", errors="", calls="")
        self.status = PhaseStatus(
            self.console,
            f"replay: sending {todo} (unit, repeat) pairs{self.candidate}",
            self.so_far,
        )
        self.progress.start()

    def so_far(self) -> str:
        """The heartbeat's line where no bar is drawn: answers in, errors, calls in flight."""
        assert self.task is not None
        task = self.progress.tasks[self.task]
        errors = task.fields["errors"]
        calls = task.fields["calls"]
        answered = task.completed + self.unshown
        return " · ".join(
            filter(None, [f"replay: {answered:.0f}/{task.total:.0f} answered", errors, calls])
        )

    def answered(self, record: ResultRecord) -> None:
        if record.error is not None:
            self.errors[record.error.kind] += 1
        self.unshown += 1
        self.show_when_due()

    def progressed(self, status: ExecutorStatus) -> None:
        self.executor = status
        self.show_when_due()

    def show_when_due(self) -> None:
        """Update the bar at most every :data:`BAR_UPDATE_SECONDS`: an update per answer costs
        more than the answer's record, and the bar is not drawn more often anyway."""
        now = time.monotonic()
        if now >= self.next_update:
            self.next_update = now + BAR_UPDATE_SECONDS
            self.show()

    def show(self) -> None:
        """The answers, their rate and errors, and the calls in flight, as they are now."""
        assert self.task is not None
        task = self.progress.tasks[self.task]
        # completed ÷ elapsed: rich's own speed re-sums its samples on every update
        completed = task.completed + self.unshown
        speed = f"{completed / task.elapsed:.1f}/s" if task.elapsed else ""
        text = " ".join(f"{kind} {count}" for kind, count in sorted(self.errors.items()))
        errors = f"errors: {text}" if text else ""
        calls = self.calls_text(task.elapsed or 0.0)
        shown, self.unshown = self.unshown, 0
        self.progress.update(self.task, advance=shown, rate=speed, errors=errors, calls=calls)

    def calls_text(self, elapsed: float) -> str:
        """In flight, and with workers elsewhere, each one's answers per second."""
        status = self.executor
        if status is None:
            return ""
        text = f"in flight {status.in_flight}"
        if elapsed and set(status.answered) - {"local"}:
            rates = sorted(status.answered.items())
            text += " · " + ", ".join(f"{name} {n / elapsed:.1f}/s" for name, n in rates)
        if status.lost:
            text += f" · lost {len(status.lost)}, sent again {status.requeued}"
        return text

    def finished(self, result: ReplayResult) -> None:
        if self.task is not None:
            self.show()
        if self.status is not None:
            self.status.close()
        self.progress.stop()
        if result.outcome.workers_lost:
            self.console.print(
                "every Ray worker was lost: the pairs left were not sent", markup=False
            )
        manifest, counts = result.manifest, result.manifest.candidate_counts
        errors = ", ".join(f"{k} {v}" for k, v in counts.errors.items()) or "none"
        refreshes = counts.credential_refreshes
        self.console.print(
            f"{result.outcome.finished} of {result.todo} sent pairs recorded in "
            f"{one_line(str(result.directory.results_path))} · calls {counts.calls} · cache hits "
            f"{counts.cache_hits} · infrastructure errors: {errors}"
            + (f" · credential refreshes {refreshes}" if refreshes else "")
            + (
                f" · model loaded in {counts.model_load_seconds:.1f} s (not in latencies)"
                if counts.model_load_seconds
                else ""
            )
            + f" · status {manifest.status}",
            markup=False,
        )
        for kind, message in manifest.error_examples.items():
            self.console.print(f"  {kind}: {message}", markup=False)
        if manifest.batches is not None:
            self.print_batches(manifest)
        if manifest.timed_out_units:
            self.console.print(
                f"{len(manifest.timed_out_units)} units timed out on every repeat (e.g. "
                f"{manifest.timed_out_units[0]}): a runaway answer, or a --timeout too short "
                "for this model",
                markup=False,
            )

    def print_batches(self, manifest: RunManifest) -> None:
        """One line per provider batch of the run, and why the batch API stopped, if it did."""
        assert manifest.batches is not None
        for job in manifest.batches.jobs:
            self.console.print(
                f"  batch {job.id} ({job.model}, {job.requests} requests): {job.status}"
                + (
                    f" · answered {job.answered} · errors {job.errors} · left to do {job.left}"
                    if job.collected
                    else " · not collected yet"
                )
                + (f" · {job.problem}" if job.problem else ""),
                markup=False,
            )
        if manifest.batches.problem:
            self.console.print(f"  batch API: {manifest.batches.problem}", markup=False)

    def scored(self, path: Path, outcome: ScoreOutcome) -> None:
        # Loaded once the run is scored: its figures are not needed before the first call.
        from agent_backtest.cli.score import print_outcome

        print_outcome(SafeConsole(highlight=False), path, outcome)


def _exit_for(console: Console, run: Run, dry_run: bool) -> None:
    """Exit 1 for a run that failed, 130 for one interrupted; say how to go on."""
    manifest = run.manifest
    where = one_line(str(run.path))  # a newline in the name cannot forge a line
    if dry_run:
        console.print(
            one_line(
                f"dry run: {manifest.units} units × k={manifest.config.k} written to "
                f"{run.directory.units_path}; nothing sent"
            ),
            markup=False,
        )
        return
    if manifest.status == "failed":
        console.print(
            "abt: error: the run failed: no answer arrived, nothing could be scored "
            f"(see above); after fixing the cause: abt replay --resume {where} --retry-errors",
            markup=False,
        )
        raise typer.Exit(FAILED)
    if manifest.status == "interrupted" and manifest.stop_reason == "budget":
        console.print(
            f"stopped at the budget (--max-cost ${manifest.max_cost_usd}): the answers that "
            f"arrived are scored (partial); finish with abt replay --resume {where} (and a "
            "higher --max-cost, or none)",
            markup=False,
        )
        raise typer.Exit(BUDGET_REACHED)
    if manifest.status == "interrupted":
        console.print(
            f"interrupted: the answers that arrived are scored (partial); finish with "
            f"abt replay --resume {where}",
            markup=False,
        )
        raise typer.Exit(INTERRUPTED)
