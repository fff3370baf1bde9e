"""``abt bench run``: roll out an agent on a benchmark's cases, then grade the episodes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent_backtest.api import CallOptions, CaseOptions, ExecutorOptions, RolloutOptions
from agent_backtest.api import bench as api
from agent_backtest.api.bench import BenchOutcome, EpisodeRecord
from agent_backtest.api.bench_reports import ResultFiles
from agent_backtest.cli.bench_report import summary_lines
from agent_backtest.cli.flags import with_groups
from agent_backtest.cli.terminal import SafeConsole
from agent_backtest.errors import UserError

FAILED = 1


@with_groups(cases=CaseOptions, rollouts=RolloutOptions, execution=ExecutorOptions)
def run(
    cases: CaseOptions,
    rollouts: RolloutOptions,
    execution: ExecutorOptions,
    benchmark: Annotated[
        str | None,
        typer.Argument(
            metavar="BENCHMARK",
            help="A benchmark directory (manifest.json, cases.jsonl and the gold file), or a "
            "shipped benchmark's name: tau_airline, bfcl.",
            show_default=False,
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option("--agent", metavar="MODEL", help="The agent's model: provider/model."),
    ] = None,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            metavar="MODEL",
            help="The simulated user's model (provider/model), or scripted: each case's "
            "metadata.user_turns (else its instruction) one per agent reply, then the stop "
            "marker.",
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge", metavar="MODEL", help="Judge of the rubric grader's items: provider/model."
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="DIR", help="The run directory to create (new or empty)."),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            metavar="DIR",
            help="Finish this run: only the episodes with no record, then grade it again.",
        ),
    ] = None,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="Model config (abt.toml): endpoints, key variables, roles "
            "[default: ./abt.toml, else the user config dir].",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", metavar="SECONDS", min=0.001, help="Seconds per model call [default: 60]."
        ),
    ] = None,
    max_retries: Annotated[
        int | None,
        typer.Option(
            "--max-retries",
            metavar="N",
            min=0,
            help="Retries of a model call's 429, 5xx, connection error or malformed answer "
            "[default: 4].",
        ),
    ] = None,
    cache: Annotated[
        bool,
        typer.Option("--cache/--no-cache", help="Read and fill the response cache."),
    ] = True,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir", metavar="DIR", help="Response cache [default: the user cache dir]."
        ),
    ] = None,
) -> None:
    """Roll out an agent on a benchmark's cases, then grade every episode against the gold
    (read only after the rollouts)."""
    console = SafeConsole(stderr=True, highlight=False, soft_wrap=True)

    def episode_ended(record: EpisodeRecord) -> None:
        console.print(_episode_line(record), markup=False)

    if resume is not None:
        if benchmark or agent or user or judge or out:
            raise UserError(
                "takes the run's own benchmark, roles and settings; pass only the run directory",
                "resume",
            )
        outcome = api.bench_resume(
            resume, execution=execution, config_file=config_file, on_episode=episode_ended
        )
    else:
        if benchmark is None or not agent or not user or out is None:
            raise UserError("give BENCHMARK, --agent, --user and --out (or --resume DIR)")
        roles = {"agent": agent, "user": user} | ({"judge": judge} if judge else {})
        outcome = api.bench_run(
            benchmark,
            roles=roles,
            out=out,
            cases=cases,
            rollouts=rollouts,
            calls=CallOptions(
                timeout=timeout, max_retries=max_retries, cache=cache, cache_dir=cache_dir
            ),
            execution=execution,
            config_file=config_file,
            on_episode=episode_ended,
        )
    _print_summary(outcome)
    if outcome.manifest.status == "failed":
        raise typer.Exit(FAILED)


def _episode_line(record: EpisodeRecord) -> str:
    """One line per ended episode, on stderr while the run goes."""
    how = f"error {record.error.kind}" if record.error else f"ended by {record.ended_by}"
    return (
        f"episode {record.episode_id}: {how} · {record.steps} agent turns · "
        f"{record.tool_calls} tool calls · {record.seconds:.1f} s"
    )


def _print_summary(outcome: BenchOutcome) -> None:
    """The run's figures (as abt bench report prints them) and the files written."""
    manifest, directory = outcome.manifest, outcome.directory
    out = SafeConsole(highlight=False, soft_wrap=True)
    out.print(
        f"{len(outcome.records)} episodes in {directory} ({outcome.ran} run now, "
        f"{outcome.already_done} already done) · status {manifest.status}",
        markup=False,
    )
    if outcome.summary is None:  # not graded: the episodes' errors are all there is to say
        counts = api.engineering_errors(outcome)
        errors = ", ".join(f"{kind} {n}" for kind, n in counts.items()) or "none"
        out.print(f"engineering errors (no reward, left out of the means): {errors}", markup=False)
        return
    for line in summary_lines(outcome.summary):
        out.print(line, markup=False)
    files = ResultFiles.of(directory)
    out.print(
        f"wrote {directory / 'grades.jsonl'}, {files.summary}, {files.csv} and {files.page}",
        markup=False,
    )
