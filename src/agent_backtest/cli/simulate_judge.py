"""``abt simulate judge``: verdicts with owner and evidence for a saved simulate run."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from agent_backtest import api
from agent_backtest.api import CallOptions
from agent_backtest.cli.flags import Only, flag, with_groups
from agent_backtest.cli.options import (
    ROLES,
    SCORING,
    SELECTION,
    ConfigFile,
    argument,
)
from agent_backtest.cli.roles import JudgeFlags
from agent_backtest.cli.simulate_figures import summary_lines
from agent_backtest.cli.status import PhaseLines
from agent_backtest.cli.terminal import SafeConsole, one_line
from agent_backtest.errors import UserError

if TYPE_CHECKING:
    from agent_backtest.simulate.findings import Findings
    from agent_backtest.simulate.judging import JudgingHooks, JudgingOutcome
    from agent_backtest.simulate.models import Verdict


class RejudgeChoice(StrEnum):
    """Which verdicts ``--rejudge`` asks for again."""

    uncertain = "uncertain"
    all = "all"


@dataclass
class VerdictFlags:
    """Who judges simulated conversations and by what; shared with abt simulate run (which
    judges after playing)."""

    judge: str | None = field(default=None, metadata=flag(ROLES, "MODEL"))
    """The judge (provider/model), or none to decide by the checks alone [default: the run's
    earlier judging, else [roles.judge] of the config]."""
    fallback_judge: str | None = field(default=None, metadata=flag(ROLES, "MODEL"))
    """Asked when the judge gives no valid verdict after one correction."""
    owners: Path | None = field(default=None, metadata=flag(SCORING, "FILE"))
    """Owner taxonomy replacing the default: one owner a line, as name: what it owns."""
    tools: Path | None = field(default=None, metadata=flag(SCORING, "FILE"))
    """The agent's tool definitions (OpenAI function format): the judge's catalogue and the
    schema every call is checked against."""
    checks: list[str] | None = field(default=None, metadata=flag(SCORING, "MODULE:FUNCTION"))
    """A check of your own, run after the built-in ones (repeatable)."""

    def choice(self) -> tuple[dict[str, str], bool]:
        """The judge roles named (for the API's ``roles``), and whether ``--judge none`` asks
        for the checks alone."""
        return judge_flags(self.judge, self.fallback_judge)


@dataclass
class JudgingScope:
    """Which conversations of the run are judged: all by default, or only those without a
    verdict, or again those that have one."""

    resume: bool = field(default=False, metadata=flag(SELECTION))
    """Judge only the conversations without a verdict."""
    rejudge: RejudgeChoice | None = field(default=None, metadata=flag(SELECTION, "uncertain|all"))
    """Ask again where no verdict was reached (uncertain), or for every conversation (all);
    never from the response cache."""


SimulateRun = argument(Path, "RUN", "A run directory from abt simulate run.")


@with_groups(calls=Only(CallOptions, ("cache",)))
def judge(
    scope: JudgingScope,
    calls: CallOptions,
    run: SimulateRun,
    verdicts: VerdictFlags,
    config_file: ConfigFile = None,
) -> None:
    """Judge a saved simulate run's conversations: checks, then the judge; never replays."""
    judges, checks_only = verdicts.choice()
    lines = JudgingLines(SafeConsole(stderr=True, highlight=False))
    with lines:
        outcome = api.simulate_judge(
            run,
            roles=judges,
            checks_only=checks_only,
            owners=verdicts.owners,
            tools=verdicts.tools,
            checks=verdicts.checks or (),
            resume=scope.resume,
            rejudge=scope.rejudge.value if scope.rejudge is not None else None,
            config_file=config_file,
            cache=calls.cache,
            hooks=lines.hooks(),
        )
    print_outcome(SafeConsole(highlight=False), outcome)


class JudgingLines(PhaseLines):
    """The judging as it goes, on stderr: how many conversations are judged, one line per
    verdict, and a heartbeat where no terminal shows the run is alive (a judge can take
    minutes over one conversation)."""

    def hooks(self) -> JudgingHooks:
        """These lines as the hooks a judging calls."""
        from agent_backtest.api.simulate_judging import JudgingHooks

        return JudgingHooks(on_judging=self.started, on_verdict=self.decided)

    def started(self, todo: int) -> None:
        self.counted_phase("judge", f"{todo} conversations to judge", todo, "judged")

    def decided(self, verdict: Verdict) -> None:
        self.one_ended()
        owner = f" · owner {verdict.owner}" if verdict.owner else ""
        why = f" ({verdict.reason})" if verdict.reason else ""
        self.console.print(
            f"  {verdict.flow_id}: {verdict.verdict}{why}{owner} · by {verdict.decided_by}",
            markup=False,
        )


def judge_flags(judge_model: str | None, fallback_judge: str | None) -> tuple[dict[str, str], bool]:
    """The judge roles the flags name, and whether ``--judge none`` asks for the checks alone."""
    if judge_model is not None and judge_model.lower() == "none":
        if fallback_judge is not None:
            raise UserError(
                "--judge none asks no judge: leave --fallback-judge out", "fallback_judge"
            )
        return {}, True
    return JudgeFlags(judge_model, fallback_judge).roles(), False


def print_outcome(console: SafeConsole, outcome: JudgingOutcome) -> None:
    """The counts, one line per conversation that did not pass, and where they were written."""
    counts = outcome.counts
    line = (
        f"{len(outcome.verdicts)} verdicts: {counts['pass']} pass · {counts['fail']} fail · "
        f"{counts['uncertain']} uncertain"
    )
    if outcome.reasons:
        line += " (" + ", ".join(f"{k} {v}" for k, v in sorted(outcome.reasons.items())) + ")"
    console.print(f"{line}; {outcome.judged} judged now", markup=False)
    calls = outcome.calls
    console.print(
        f"judge calls {calls['calls']} · from the cache {calls['cache_hits']} · "
        f"retries {calls['retries']}",
        markup=False,
    )
    if outcome.not_played:
        console.print(f"not played yet (not judged): {len(outcome.not_played)}", markup=False)
    for verdict in outcome.verdicts:
        if verdict.verdict == "pass":
            continue
        turns = ",".join(map(str, verdict.failed_turns))
        what = [verdict.owner or verdict.reason, verdict.failure_category]
        what.append(f"turns {turns}" if turns else None)
        console.print(
            f"{verdict.verdict} {verdict.flow_id} [{' '.join(filter(None, what))}] "
            f"{verdict.evidence or ''}",
            markup=False,
        )
    report = outcome.report
    if report is None:
        console.print(one_line(f"wrote {outcome.path}"), markup=False)
    else:
        for line in summary_lines(report.summary):
            console.print(line, markup=False, soft_wrap=True)
        console.print(
            one_line(f"wrote {outcome.path}, {report.summary_path} and {report.page_path}"),
            markup=False,
        )
    if outcome.findings is not None:
        print_findings(console, outcome.findings)


def print_findings(console: SafeConsole, findings: Findings) -> None:
    """Where the ledger and the coverage manifest were written, and the team ledger appended."""
    line = f"wrote {findings.ledger} and {findings.coverage}"
    if findings.appended_to is not None:
        line += f"; appended the run's findings to {findings.appended_to}"
    console.print(one_line(line), markup=False)
