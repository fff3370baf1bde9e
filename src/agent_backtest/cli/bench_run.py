"""``abt bench run``: roll out an agent on a benchmark's cases, then grade the episodes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import typer

from agent_backtest.api import CallOptions, CaseOptions, ExecutorOptions, RolloutOptions
from agent_backtest.api import bench as api
from agent_backtest.api.bench import BenchOutcome, EpisodeRecord
from agent_backtest.api.bench_reports import ResultFiles
from agent_backtest.cli.bench_report import summary_lines
from agent_backtest.cli.flags import Only, flag, with_groups
from agent_backtest.cli.options import INPUTS, ROLES, ConfigFile, RunDirectory, argument
from agent_backtest.cli.terminal import SafeConsole
from agent_backtest.errors import UserError

FAILED = 1


Benchmark = argument(
    str | None,
    "BENCHMARK",
    "A benchmark directory (manifest.json, cases.jsonl and the gold file), or a shipped "
    "benchmark's name: tau_airline, bfcl.",
)


@dataclass
class BenchRunFlags:
    """The models of a bench run's roles, and the run to finish."""

    agent: str | None = field(default=None, metadata=flag(ROLES, "MODEL"))
    """The agent's model: provider/model."""
    user: str | None = field(default=None, metadata=flag(ROLES, "MODEL"))
    """The simulated user's model (provider/model), or scripted: each case's
    metadata.user_turns (else its instruction) one per agent reply, then the stop marker."""
    judge: str | None = field(default=None, metadata=flag(ROLES, "MODEL"))
    """Judge of the rubric grader's items: provider/model."""
    resume: Path | None = field(default=None, metadata=flag(INPUTS, "DIR"))
    """Finish this run: only the episodes with no record, then grade it again."""

    def roles(self) -> dict[str, str]:
        """The roles named, for the API's ``roles``."""
        named = {"agent": self.agent, "user": self.user, "judge": self.judge}
        return {name: model for name, model in named.items() if model}


@with_groups(calls=Only(CallOptions, ("timeout", "max_retries", "cache", "cache_dir")))
def run(
    cases: CaseOptions,
    rollouts: RolloutOptions,
    calls: CallOptions,
    execution: ExecutorOptions,
    flags: BenchRunFlags,
    benchmark: Benchmark = None,
    out: RunDirectory = None,
    config_file: ConfigFile = None,
) -> None:
    """Roll out an agent on a benchmark's cases, then grade every episode against the gold
    (read only after the rollouts)."""
    console = SafeConsole(stderr=True, highlight=False, soft_wrap=True)

    def episode_ended(record: EpisodeRecord) -> None:
        console.print(_episode_line(record), markup=False)

    common = dict(execution=execution, config_file=config_file, on_episode=episode_ended)
    if flags.resume is not None:
        if benchmark or flags.roles() or out:
            raise UserError(
                "takes the run's own benchmark, roles and settings; pass only the run directory",
                "resume",
            )
        outcome = api.bench_resume(flags.resume, **common)
    else:
        if benchmark is None or not flags.agent or not flags.user or out is None:
            raise UserError("give BENCHMARK, --agent, --user and --out (or --resume DIR)")
        outcome = api.bench_run(
            benchmark,
            roles=flags.roles(),
            out=out,
            cases=cases,
            rollouts=rollouts,
            calls=calls,
            **common,
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
