"""``abt simulate run``: play test conversations through a live agent, recording every turn."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agent_backtest.api import ExecutorOptions
from agent_backtest.cli.flags import flag, with_groups
from agent_backtest.cli.options import (
    CALLS,
    INPUTS,
    MAX_CONCURRENCY,
    OUTPUT,
    ROLES,
    SCORING,
    SELECTION,
    argument,
)
from agent_backtest.cli.run_output import RunOutput
from agent_backtest.cli.simulate_generate import TEACHER_HELP, teacher_failures_exit_1
from agent_backtest.cli.simulate_judge import JudgingLines, VerdictFlags, print_outcome
from agent_backtest.cli.spending import print_spent
from agent_backtest.cli.terminal import SafeConsole
from agent_backtest.errors import UserError

# The simulate machinery (agent targets, clients, judges) loads when a run starts, not for --help.
if TYPE_CHECKING:
    from agent_backtest.api import simulate as api
    from agent_backtest.api.simulate import ConversationRecord, SimulateHooks

FAILED = 1

Flows = argument(
    Path | None, "FLOWS", "The flows: JSONL, JSON (a list, or an object holding flows) or YAML."
)


@dataclass
class SimulateRunFlags:
    """The target, where the flows come from and which are played, the roles, the isolation of
    flows that change data, and what is written."""

    target: Path | None = field(default=None, metadata=flag(INPUTS, "FILE"))
    """The target file (TOML): the live agent."""
    resume: Path | None = field(default=None, metadata=flag(INPUTS, "DIR"))
    """Finish this run: play only the flows with no recorded conversation."""
    retry_errors: bool = field(default=False, metadata=flag(INPUTS))
    """With --resume: also play again the flows whose conversation ended in a transport error."""
    generate: Path | None = field(default=None, metadata=flag(INPUTS, "CAPABILITIES"))
    """Play flows the teacher writes from this capability file (YAML or JSON), --per-family N
    of each family, with --tools as the catalogue, instead of FLOWS."""
    from_run: Path | None = field(default=None, metadata=flag(INPUTS, "RUN"))
    """Play the flows of this earlier simulate run, as it played them (instead of FLOWS), kept
    by --verdict and --owner."""
    agent_config: Path | None = field(default=None, metadata=flag(INPUTS, "FILE"))
    """Agent config file (TOML, JSON or YAML): read_only_tools and mutating_tools."""
    teacher: str | None = field(default=None, metadata=flag(ROLES, "MODEL", help=TEACHER_HELP))
    user: str | None = field(default=None, metadata=flag(ROLES, "MODEL"))
    """The model (provider/model) that plays simulated users [default: [roles.user] of
    abt.toml]."""
    agent: str | None = field(default=None, metadata=flag(ROLES, "MODEL"))
    """The model (provider/model) of a model target's agent loop [default: [roles.agent] of
    abt.toml]."""
    family: list[str] | None = field(default=None, metadata=flag(SELECTION, "NAME"))
    """Play only flows of this family (repeatable)."""
    per_family: int | None = field(default=None, metadata=flag(SELECTION, "N", min=1))
    """At most N flows of each family, taken round-robin across families."""
    offset: int = field(default=0, metadata=flag(SELECTION, "N", min=0))
    """Skip the first N flows selected."""
    limit: int | None = field(default=None, metadata=flag(SELECTION, "N", min=1))
    """Play at most N flows."""
    verdict: list[str] | None = field(default=None, metadata=flag(SELECTION, "VERDICT"))
    """With --from: only the flows it judged so: pass, fail or uncertain (repeatable)."""
    owner: list[str] | None = field(default=None, metadata=flag(SELECTION, "OWNER"))
    """With --from: only the flows whose verdict names this owner (repeatable)."""
    exclude_judged: list[Path] | None = field(default=None, metadata=flag(SELECTION, "RUN"))
    """Leave out the flows whose seed this run (or each run in this folder) judged pass or fail
    through the same target; uncertain ones play again (repeatable)."""
    k: int = field(default=1, metadata=flag(SELECTION, "N", min=1, max=1000))
    """Play each flow N times (repeat n's simulated user seeded n-1); the summary gives
    pass^1..N and pass@1..N."""
    read_only_only: bool = field(default=False, metadata=flag(SELECTION))
    """Skip (and count) the flows that may change the agent's data, instead of refusing the
    run."""
    fixture_db: Path | None = field(default=None, metadata=flag(CALLS, "FILE"))
    """A SQLite file the agent keeps its data in: copied once, restored before and after every
    flow that may change it, and at the end."""
    snapshot_cmd: str | None = field(default=None, metadata=flag(CALLS, "CMD"))
    """Snapshot the agent's data once (a shell command; with --restore-cmd)."""
    restore_cmd: str | None = field(default=None, metadata=flag(CALLS, "CMD"))
    """Restore that snapshot, before and after every flow that may change the data, and at the
    end."""
    concurrency: int | None = field(
        default=None, metadata=flag(CALLS, "N", min=1, max=MAX_CONCURRENCY)
    )
    """Conversations side by side (isolated flows run one at a time) [default: 4]."""
    skip_judge: bool = field(default=False, metadata=flag(SCORING))
    """Record the conversations only; abt simulate judge RUN later."""
    ledger: Path | None = field(default=None, metadata=flag(OUTPUT, "FILE"))
    """A team ledger (Markdown) the run's failures are appended to, once, when every
    conversation has a verdict."""
    result_chars: int = field(default=2000, metadata=flag(OUTPUT, "N", min=0))
    """Characters of each tool result kept (its full length is recorded)."""


@teacher_failures_exit_1
@with_groups()
def run(
    output: RunOutput,
    execution: ExecutorOptions,
    flags: SimulateRunFlags,
    verdicts: VerdictFlags,
    flows: Flows = None,
) -> None:
    """Play test conversations through a live agent and record every turn; conversations are
    appended as they end, and --resume finishes an interrupted run. The agent is tried once
    before anything is written; the run exits 1 when a conversation could not be completed or
    called a tool not declared read-only outside isolation."""
    from agent_backtest.api import simulate as api
    from agent_backtest.api.simulate import GenerateOptions, IsolationOptions, JudgingOptions

    progress = _Progress(SafeConsole(stderr=True, highlight=False))
    judges, checks_only = verdicts.choice()
    judging = JudgingOptions(
        owners=verdicts.owners,
        tools=verdicts.tools,
        checks=tuple(verdicts.checks or ()),
        config_file=output.config_file,
        checks_only=checks_only,
    )
    common = dict(
        skip_judge=flags.skip_judge, judging=judging, hooks=progress.hooks(), execution=execution
    )
    if flags.resume is not None:
        given = (flows, flags.target, output.out, flags.generate, flags.from_run, flags.verdict)
        if any((*given, flags.owner, flags.exclude_judged, flags.ledger)) or flags.k != 1:
            raise UserError(
                "takes the run's own flows, target and settings; pass only the run directory",
                "resume",
            )
        with progress.checking():
            done = api.simulate_resume(
                flags.resume,
                roles=judges,
                concurrency=flags.concurrency,
                snapshot_cmd=flags.snapshot_cmd,
                restore_cmd=flags.restore_cmd,
                retry_errors=flags.retry_errors,
                **common,
            )
    else:
        if flags.retry_errors:
            raise UserError(
                "plays again the flows of a run you resume: add --resume DIR", "retry_errors"
            )
        generate = flags.generate
        if sum(source is not None for source in (flows, generate, flags.from_run)) != 1:
            raise UserError(
                "give FLOWS, --generate CAPABILITIES or --from RUN (one of the three)", "flows"
            )
        if flags.target is None or output.out is None:
            raise UserError("give FLOWS, --target and --out (or --resume DIR)")
        roles = _run_roles(
            judges, user=flags.user, agent=flags.agent, teacher=flags.teacher if generate else None
        )
        with progress.checking():
            done = api.simulate_run(
                flows,
                target=flags.target,
                out=output.out,
                roles=roles,
                families=flags.family or (),
                per_family=flags.per_family,
                offset=flags.offset,
                limit=flags.limit,
                from_run=flags.from_run,
                from_verdicts=flags.verdict or (),
                from_owners=flags.owner or (),
                exclude_judged=flags.exclude_judged or (),
                ledger=flags.ledger,
                isolation=IsolationOptions(
                    flags.read_only_only, flags.fixture_db, flags.snapshot_cmd, flags.restore_cmd
                ),
                concurrency=flags.concurrency or 4,
                agent_config=flags.agent_config,
                config_file=output.config_file,
                result_chars=flags.result_chars,
                generate=GenerateOptions(generate, verdicts.tools, flags.per_family)
                if generate
                else None,
                k=flags.k,
                **common,
            )
    _summary(done)


def _run_roles(judges: dict[str, str], **models: str | None) -> dict[str, str]:
    """The run's roles: the judges, and each other role whose model was named."""
    return judges | {name: model for name, model in models.items() if model}


class _Progress(JudgingLines):
    """The run as it goes, on stderr: its checks, one line per conversation as it is recorded,
    then the judging; where no terminal shows the run is alive, a heartbeat through each phase
    (the agent's first try, a long conversation, a slow judge)."""

    def hooks(self) -> SimulateHooks:
        """These lines as the hooks a simulate run calls."""
        from agent_backtest.api.simulate import SimulateHooks

        return SimulateHooks(
            on_start=self.playing,
            on_conversation=self.recorded,
            on_judging=self.started,
            on_verdict=self.decided,
        )

    def checking(self) -> _Progress:
        """Say that the run's checks start (trying the agent once can take a while)."""
        self.phase(
            None,  # a check that fails fast says so in one line, with nothing before it
            lambda: (
                "simulate: checking the flows, the roles and the target (the agent is tried "
                "once); nothing is written before they pass"
            ),
        )
        return self

    def playing(self, todo: int, done: int) -> None:
        already = f" ({done} already recorded)" if done else ""
        self.counted_phase(
            "simulate", f"{todo} conversations to play{already}", todo, "conversations recorded"
        )

    def recorded(self, record: ConversationRecord) -> None:
        self.one_ended()
        if record.transport_error:
            what = f"not completed: {record.transport_error}"
        else:
            what = f"{len(record.turns)} turns"
        if record.unisolated_calls:
            what += (
                f"; called {', '.join(record.unisolated_calls)} unisolated, not declared "
                "read-only: the agent's data may have changed"
            )
        self.console.print(f"  {record.flow_id} ({record.family}): {what}", markup=False)


def _summary(run: api.SimulateRun) -> None:
    manifest = run.manifest
    counts = manifest.played
    parts = [f"{counts.conversations} of {counts.flows} conversations recorded"]
    if counts.transport_errors:
        parts.append(f"{counts.transport_errors} not completed (transport errors, never judged)")
    if counts.unisolated_mutations:
        parts.append(
            f"{counts.unisolated_mutations} called a tool not declared read-only unisolated "
            "(uncertain: unisolated_mutation)"
        )
    if counts.isolated:
        parts.append(f"{counts.isolated} isolated")
    if counts.skipped_may_change_state:
        parts.append(f"{counts.skipped_may_change_state} skipped as they may change state")
    if manifest.selection.left_out:
        parts.append(f"left out: {run.left_out}")
    console = SafeConsole(highlight=False)
    console.print(f"{'; '.join(parts)}: {run.path} ({manifest.status})", markup=False)
    print_spent(console, run.path)
    for warning in manifest.warnings:
        SafeConsole(stderr=True, highlight=False, soft_wrap=True).print(
            f"warning: {warning}", markup=False
        )
    if run.judging is not None:
        print_outcome(console, run.judging)
    if manifest.status in ("failed", "completed_with_errors"):
        raise typer.Exit(FAILED)
