"""``abt bench run``: roll out an agent on a benchmark's cases, then grade the episodes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agent_backtest.api import CallOptions, CaseOptions, ExecutorOptions, RolloutOptions
from agent_backtest.cli.bench_report import summary_lines
from agent_backtest.cli.flags import Only, flag, with_groups
from agent_backtest.cli.options import INPUTS, ROLES, argument
from agent_backtest.cli.run_output import RunOutput
from agent_backtest.cli.spending import print_spent
from agent_backtest.cli.status import PhaseLines
from agent_backtest.cli.terminal import SafeConsole, one_line
from agent_backtest.errors import UserError

# The bench machinery loads when a run starts, not for --help.
if TYPE_CHECKING:
    from agent_backtest.api.bench import BenchHooks, BenchOutcome, EpisodeRecord
    from agent_backtest.api.roles import RoleModel, RoleSettings

FAILED = 1


Benchmark = argument(
    str | None,
    "BENCHMARK",
    "A benchmark directory (manifest.json, cases.jsonl and the gold file), or a shipped "
    "benchmark's name: tau_airline, bfcl.",
)


@dataclass
class BenchRunFlags:
    """The models of a bench run's roles, how the agent and the user sample, and the run to
    finish."""

    agent: str | None = field(default=None, metadata=flag(ROLES, "MODEL"))
    """The agent's model: provider/model."""
    agent_temperature: float | None = field(default=None, metadata=flag(ROLES, "T", min=0, max=2))
    """The agent's sampling temperature (τ-bench runs at 0) [default: the provider's]."""
    agent_top_p: float | None = field(default=None, metadata=flag(ROLES, "P", min=0, max=1))
    """The agent's nucleus sampling mass [default: the provider's]."""
    agent_max_tokens: int | None = field(default=None, metadata=flag(ROLES, "N", min=1))
    """The most tokens per agent answer [default: the provider's]."""
    user: str | None = field(default=None, metadata=flag(ROLES, "MODEL"))
    """The simulated user's model (provider/model); tau or abt: that user prompt played by the
    model of [roles.user] in abt.toml; or scripted: each case's metadata.user_turns (else its
    instruction) one per agent reply, then the stop marker. Not needed when every case opens
    with its own messages (bfcl)."""
    user_prompt: str | None = field(default=None, metadata=flag(ROLES, "tau|abt"))
    """The simulated user's system prompt: tau (τ-bench's user simulator) or abt (abt's own)
    [default: the benchmark's; tau_airline's is tau]."""
    user_temperature: float | None = field(default=None, metadata=flag(ROLES, "T", min=0, max=2))
    """The simulated user's sampling temperature [default: the provider's]."""
    user_top_p: float | None = field(default=None, metadata=flag(ROLES, "P", min=0, max=1))
    """The simulated user's nucleus sampling mass [default: the provider's]."""
    user_max_tokens: int | None = field(default=None, metadata=flag(ROLES, "N", min=1))
    """The most tokens per simulated user message [default: the provider's]."""
    judge: str | None = field(default=None, metadata=flag(ROLES, "MODEL"))
    """Judge of the rubric grader's items: provider/model."""
    resume: Path | None = field(default=None, metadata=flag(INPUTS, "DIR"))
    """Finish this run: only the episodes with no record, then grade it again."""

    def roles(self) -> dict[str, RoleModel]:
        """The roles named, for the API's ``roles``: a model, or a model with its sampling."""
        from agent_backtest.api.bench import SCRIPTED, USER_PROMPTS

        named: dict[str, RoleModel] = {}
        for name, model in (("agent", self.agent), ("user", self.user), ("judge", self.judge)):
            sampling = self.sampling(name)
            if name == "user" and model in USER_PROMPTS:  # the model comes from [roles.user]
                named[name] = _with_sampling(name, None, sampling)
                continue
            if sampling and (not model or model == SCRIPTED):
                raise UserError(
                    f"sets how the {name}'s model samples: name the model with --{name}",
                    f"{name}_{next(iter(sampling))}",
                )
            if model:
                named[name] = _with_sampling(name, model, sampling) if sampling else model
        return named

    def sets_the_run(self) -> bool:
        """True when a role, its sampling or the user prompt is given (a resume takes the
        run's own)."""
        return any(value is not None for name, value in vars(self).items() if name != "resume")

    def prompt(self) -> str | None:
        """The simulated user's prompt: --user-prompt, or the prompt --user names."""
        from agent_backtest.api.bench import USER_PROMPTS

        if self.user not in USER_PROMPTS:
            return self.user_prompt
        if self.user_prompt not in (None, self.user):
            raise UserError(
                f"names another user prompt than --user {self.user}: give one of them",
                "user_prompt",
            )
        return self.user

    def sampling(self, role: str) -> dict[str, float | int]:
        """The sampling flags given for ``role`` (agent or user), by setting name."""
        from agent_backtest.api.roles import SAMPLING_FIELDS

        given = {setting: getattr(self, f"{role}_{setting}", None) for setting in SAMPLING_FIELDS}
        return {setting: value for setting, value in given.items() if value is not None}


def _with_sampling(role: str, model: str | None, sampling: dict[str, float | int]) -> RoleSettings:
    """The role's model (None: the config's) with its sampling flags; a value out of bounds
    names its flag."""
    from pydantic import ValidationError

    from agent_backtest.api.roles import RoleSettings

    try:
        return RoleSettings(model=model, **sampling)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise UserError(error["msg"], f"{role}_{error['loc'][0]}") from None


@with_groups(calls=Only(CallOptions, ("timeout", "max_retries", "cache", "cache_dir")))
def run(
    output: RunOutput,
    cases: CaseOptions,
    rollouts: RolloutOptions,
    calls: CallOptions,
    execution: ExecutorOptions,
    flags: BenchRunFlags,
    benchmark: Benchmark = None,
) -> None:
    """Roll out an agent on a benchmark's cases, then grade every episode against the gold
    (read only after the rollouts)."""
    from agent_backtest.api import bench as api

    lines = _BenchLines(SafeConsole(stderr=True, highlight=False, soft_wrap=True))
    common = dict(execution=execution, config_file=output.config_file, hooks=lines.hooks())
    if flags.resume is not None:
        if benchmark or flags.sets_the_run() or output.out:
            raise UserError(
                "takes the run's own benchmark, roles and settings; pass only the run directory",
                "resume",
            )
        with lines:
            outcome = api.bench_resume(flags.resume, **common)
    else:
        if benchmark is None or not flags.agent or output.out is None:
            raise UserError("give BENCHMARK, --agent and --out (or --resume DIR)")
        with lines:
            outcome = api.bench_run(
                benchmark,
                roles=flags.roles(),
                out=output.out,
                user_prompt=flags.prompt(),
                cases=cases,
                rollouts=rollouts,
                calls=calls,
                **common,
            )
    _print_summary(outcome)
    if outcome.manifest.status == "failed":
        raise typer.Exit(FAILED)


class _BenchLines(PhaseLines):
    """The run as it goes, on stderr: its start, one line per ended episode, the grading; where
    no terminal shows the run is alive, a heartbeat while episodes run (an agent's first turn
    can take a minute)."""

    def hooks(self) -> BenchHooks:
        """These lines as the hooks a bench run calls."""
        from agent_backtest.api.bench import BenchHooks

        return BenchHooks(
            on_start=self.started, on_episode=self.episode_ended, on_grading=self.grading
        )

    def started(self, todo: int, done: int) -> None:
        already = f" ({done} already done)" if done else ""
        self.counted_phase("bench", f"{todo} episodes to run{already}", todo, "episodes ended")

    def episode_ended(self, record: EpisodeRecord) -> None:
        self.one_ended()
        how = f"error {record.error.kind}" if record.error else f"ended by {record.ended_by}"
        self.console.print(
            f"episode {record.episode_id}: {how} · {record.steps} agent turns · "
            f"{record.tool_calls} tool calls · {record.seconds:.1f} s",
            markup=False,
        )

    def grading(self, episodes: int) -> None:
        self.close()
        self.console.print(
            f"bench: grading {episodes} episodes against the gold (read now)", markup=False
        )


def _print_summary(outcome: BenchOutcome) -> None:
    """The run's figures (as abt bench report prints them) and the files written."""
    from agent_backtest.api.bench import engineering_errors
    from agent_backtest.api.bench_reports import ResultFiles

    manifest, directory = outcome.manifest, outcome.directory
    out = SafeConsole(highlight=False, soft_wrap=True)
    out.print(
        f"{len(outcome.records)} episodes in {directory} ({outcome.ran} run now, "
        f"{outcome.already_done} already done) · status {manifest.status}",
        markup=False,
    )
    print_spent(out, directory)
    if outcome.summary is None:  # not graded: the episodes' errors are all there is to say
        counts = engineering_errors(outcome)
        errors = ", ".join(f"{kind} {n}" for kind, n in counts.items()) or "none"
        out.print(f"engineering errors (no reward, left out of the means): {errors}", markup=False)
        return
    for line in summary_lines(outcome.summary):
        out.print(line, markup=False)
    files = ResultFiles.of(directory)
    out.print(
        one_line(
            f"wrote {directory / 'grades.jsonl'}, {files.summary}, {files.csv} and {files.page}"
        ),
        markup=False,
    )
