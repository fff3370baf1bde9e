"""``abt simulate run``: play test conversations through a live agent, recording every turn."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from agent_backtest.api import ExecutorOptions
from agent_backtest.api import simulate as api
from agent_backtest.api.simulate import (
    ConversationRecord,
    GenerateOptions,
    IsolationOptions,
    JudgingOptions,
    SimulateHooks,
)
from agent_backtest.cli.roles import JudgeFlags
from agent_backtest.cli.simulate_generate import TeacherOption, teacher_failures_exit_1
from agent_backtest.cli.simulate_judge import (
    ChecksOption,
    FallbackJudgeOption,
    JudgeOption,
    OwnersOption,
    ToolsOption,
    print_outcome,
)
from agent_backtest.cli.terminal import SafeConsole
from agent_backtest.errors import UserError

FAILED = 1


@teacher_failures_exit_1
def run(
    flows: Annotated[
        Path | None,
        typer.Argument(
            metavar="FLOWS",
            help="The flows: JSONL, JSON (a list, or an object holding flows) or YAML.",
            show_default=False,
        ),
    ] = None,
    target: Annotated[
        Path | None,
        typer.Option("--target", metavar="FILE", help="The target file (TOML): the live agent."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", metavar="DIR", help="The run directory to create.")
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            metavar="DIR",
            help="Finish this run: play only the flows with no recorded conversation.",
        ),
    ] = None,
    retry_errors: Annotated[
        bool,
        typer.Option(
            "--retry-errors",
            help="With --resume: also play again the flows whose conversation ended in a "
            "transport error.",
        ),
    ] = False,
    generate: Annotated[
        Path | None,
        typer.Option(
            "--generate",
            metavar="CAPABILITIES",
            help="Play flows the teacher writes from this capability file (YAML or JSON), "
            "--per-family N of each family, with --tools as the catalogue, instead of FLOWS.",
        ),
    ] = None,
    teacher: TeacherOption = None,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            metavar="MODEL",
            help="The model (provider/model) that plays simulated users [default: [roles.user] "
            "of abt.toml].",
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            metavar="MODEL",
            help="The model (provider/model) of a model target's agent loop [default: "
            "[roles.agent] of abt.toml].",
        ),
    ] = None,
    family: Annotated[
        list[str] | None,
        typer.Option(
            "--family", metavar="NAME", help="Play only flows of this family (repeatable)."
        ),
    ] = None,
    per_family: Annotated[
        int | None,
        typer.Option(
            "--per-family",
            metavar="N",
            min=1,
            help="At most N flows of each family, taken round-robin across families.",
        ),
    ] = None,
    offset: Annotated[
        int, typer.Option("--offset", metavar="N", min=0, help="Skip the first N flows selected.")
    ] = 0,
    limit: Annotated[
        int | None, typer.Option("--limit", metavar="N", min=1, help="Play at most N flows.")
    ] = None,
    from_run: Annotated[
        Path | None,
        typer.Option(
            "--from",
            metavar="RUN",
            help="Play the flows of this earlier simulate run, as it played them (instead of "
            "FLOWS), kept by --verdict and --owner.",
        ),
    ] = None,
    verdict: Annotated[
        list[str] | None,
        typer.Option(
            "--verdict",
            metavar="VERDICT",
            help="With --from: only the flows it judged so: pass, fail or uncertain (repeatable).",
        ),
    ] = None,
    owner: Annotated[
        list[str] | None,
        typer.Option(
            "--owner",
            metavar="OWNER",
            help="With --from: only the flows whose verdict names this owner (repeatable).",
        ),
    ] = None,
    exclude_judged: Annotated[
        list[Path] | None,
        typer.Option(
            "--exclude-judged",
            metavar="RUN",
            help="Leave out the flows whose seed this run (or each run in this folder) judged "
            "pass or fail through the same target; uncertain ones play again (repeatable).",
        ),
    ] = None,
    ledger: Annotated[
        Path | None,
        typer.Option(
            "--ledger",
            metavar="FILE",
            help="A team ledger (Markdown) the run's failures are appended to, once, when "
            "every conversation has a verdict.",
        ),
    ] = None,
    read_only_only: Annotated[
        bool,
        typer.Option(
            "--read-only-only",
            help="Skip (and count) the flows that may change the agent's data, instead of "
            "refusing the run.",
        ),
    ] = False,
    fixture_db: Annotated[
        Path | None,
        typer.Option(
            "--fixture-db",
            metavar="FILE",
            help="A SQLite file the agent keeps its data in: copied once, restored before and "
            "after every flow that may change it, and at the end.",
        ),
    ] = None,
    snapshot_cmd: Annotated[
        str | None,
        typer.Option(
            "--snapshot-cmd",
            metavar="CMD",
            help="Snapshot the agent's data once (a shell command; with --restore-cmd).",
        ),
    ] = None,
    restore_cmd: Annotated[
        str | None,
        typer.Option(
            "--restore-cmd",
            metavar="CMD",
            help="Restore that snapshot, before and after every "
            "flow that may change the data, and at the end.",
        ),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            metavar="N",
            min=1,
            help="Conversations side by side (isolated flows run one at a time) [default: 4].",
        ),
    ] = None,
    agent_config: Annotated[
        Path | None,
        typer.Option(
            "--agent-config",
            metavar="FILE",
            help="Agent config file (TOML, JSON or YAML): read_only_tools and mutating_tools.",
        ),
    ] = None,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="Model config (abt.toml) for the user and agent roles [default: ./abt.toml, else "
            "the user config dir].",
        ),
    ] = None,
    result_chars: Annotated[
        int,
        typer.Option(
            "--result-chars",
            metavar="N",
            min=0,
            help="Characters of each tool result kept (its full length is recorded).",
        ),
    ] = 2000,
    skip_judge: Annotated[
        bool,
        typer.Option(
            "--skip-judge", help="Record the conversations only; abt simulate judge RUN later."
        ),
    ] = False,
    executor: Annotated[
        Literal["local", "ray"],
        typer.Option(
            "--executor",
            metavar="local|ray",
            help="Make the agent's, the simulated user's and the judges' model calls here (local) "
            "or on Ray workers (ray: needs the ray extra); the run directory is the same either "
            "way.",
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            metavar="ADDR",
            help="With --executor ray: the cluster to join (auto, or ray://HOST:PORT) "
            "[default: start one on this machine].",
        ),
    ] = None,
    judge_model: JudgeOption = None,
    fallback_judge: FallbackJudgeOption = None,
    owners: OwnersOption = None,
    tools: ToolsOption = None,
    checks: ChecksOption = None,
) -> None:
    """Play test conversations through a live agent and record every turn; conversations are
    appended as they end, and --resume finishes an interrupted run. The agent is tried once
    before anything is written; the run exits 1 when a conversation could not be completed or
    called a tool not declared read-only outside isolation."""
    hooks = _Progress(SafeConsole(stderr=True, highlight=False))
    execution = ExecutorOptions(executor, ray_address)
    judges = JudgeFlags(judge_model, fallback_judge).roles()
    judging = JudgingOptions(
        owners=owners,
        tools=tools,
        checks=tuple(checks or ()),
        config_file=config_file,
    )
    if resume is not None:
        given = (flows, target, out, generate, from_run, verdict, owner, exclude_judged, ledger)
        if any(given):
            raise UserError(
                "takes the run's own flows, target and settings; pass only the run directory",
                "resume",
            )
        done = api.simulate_resume(
            resume,
            roles=judges,
            concurrency=concurrency,
            snapshot_cmd=snapshot_cmd,
            restore_cmd=restore_cmd,
            retry_errors=retry_errors,
            skip_judge=skip_judge,
            judging=judging,
            hooks=hooks,
            execution=execution,
        )
    else:
        if retry_errors:
            raise UserError(
                "plays again the flows of a run you resume: add --resume DIR", "retry_errors"
            )
        sources = [flows is not None, generate is not None, from_run is not None]
        if sum(sources) != 1:
            raise UserError(
                "give FLOWS, --generate CAPABILITIES or --from RUN (one of the three)", "flows"
            )
        if target is None or out is None:
            raise UserError("give FLOWS, --target and --out (or --resume DIR)")
        done = api.simulate_run(
            flows,
            target=target,
            out=out,
            roles=_run_roles(judges, user=user, agent=agent, teacher=teacher if generate else None),
            families=family or (),
            per_family=per_family,
            offset=offset,
            limit=limit,
            from_run=from_run,
            from_verdicts=verdict or (),
            from_owners=owner or (),
            exclude_judged=exclude_judged or (),
            ledger=ledger,
            isolation=IsolationOptions(read_only_only, fixture_db, snapshot_cmd, restore_cmd),
            concurrency=concurrency or 4,
            agent_config=agent_config,
            config_file=config_file,
            result_chars=result_chars,
            skip_judge=skip_judge,
            judging=judging,
            hooks=hooks,
            execution=execution,
            generate=GenerateOptions(generate, tools, per_family) if generate else None,
        )
    _summary(done)


def _run_roles(judges: dict[str, str], **models: str | None) -> dict[str, str]:
    """The run's roles: the judges, and each other role whose model was named."""
    return judges | {name: model for name, model in models.items() if model}


class _Progress(SimulateHooks):
    """One line on stderr per conversation as it is recorded."""

    def __init__(self, console: SafeConsole) -> None:
        super().__init__()
        self.console = console
        self.on_start = self.started
        self.on_conversation = self.recorded

    def started(self, todo: int, done: int) -> None:
        already = f" ({done} already recorded)" if done else ""
        self.console.print(f"simulate: {todo} conversations to play{already}", markup=False)

    def recorded(self, record: ConversationRecord) -> None:
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
    for warning in manifest.warnings:
        SafeConsole(stderr=True, highlight=False, soft_wrap=True).print(
            f"warning: {warning}", markup=False
        )
    if run.judging is not None:
        print_outcome(console, run.judging)
    if manifest.status in ("failed", "completed_with_errors"):
        raise typer.Exit(FAILED)
